"""Temporary: splice parts/<name>.py into gpualert.py between its part markers."""
import re, sys, os
HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "gpualert.py")

def body_of(path):
    text = open(path).read()
    text = re.sub(r"(?ms)^# -- interface copy: removed on splice --.*?^# -- end interface copy --\n", "", text)
    lines = text.split("\n")
    out, imports = [], set()
    i = 0
    if lines and lines[0].startswith("#!"):
        i = 1
    rest = "\n".join(lines[i:]).lstrip()
    if rest.startswith(('"""', "'''")):
        q = rest[:3]; rest = rest[rest.index(q, 3) + 3:]
    for line in rest.split("\n"):
        m = re.match(r"^(?:import ([\w., ]+)|from ([\w.]+) import .*)$", line)
        if m:
            imports.update(x.strip() for x in (m.group(1) or m.group(2)).split(","))
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n", imports

def main(parts):
    src = open(TARGET).read()
    for name, path in parts:
        body, imports = body_of(path)
        pat = re.compile(r"(?ms)^# >>> part: %s\n.*?^# <<< part: %s\n" % (name, name))
        assert pat.search(src), name
        src = pat.sub(lambda m: "# >>> part: %s\n%s# <<< part: %s\n" % (name, body, name), src)
        print(name, "imports:", sorted(imports))
    open(TARGET, "w").write(src)

if __name__ == "__main__":
    main([a.split("=", 1) for a in sys.argv[1:]])
