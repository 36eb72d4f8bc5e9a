"""The shape of gpualert.py that issues 8 and 19 ask to keep: no function takes
more than five positional parameters, so a call site cannot silently swap two of
them (extra parameters go keyword-only (`*,`) or into a small record), and no
top-level function or class is dead: each is used in gpualert.py, the tests or
eval.py. The signature limit holds for eval.py too."""
import ast
import collections
import glob
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, os.pardir, "gpualert.py")
EVAL = os.path.join(HERE, os.pardir, "eval.py")
MOST_POSITIONAL = 5
# Signatures fixed by the standard library: urllib calls
# HTTPRedirectHandler.redirect_request(req, fp, code, msg, headers, newurl).
FIXED_BY_STDLIB = {"redirect_request"}


def positional_names(func):
    """The positional parameters a caller must or may pass, without self/cls."""
    args = getattr(func.args, "posonlyargs", []) + func.args.args
    names = [a.arg for a in args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def too_wide(tree):
    """(line, name, count) for every function with too many positional parameters."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name in FIXED_BY_STDLIB:
            continue
        count = len(positional_names(node))
        if count > MOST_POSITIONAL:
            found.append((node.lineno, node.name, count))
    return found


def test_no_function_takes_more_than_five_positional_parameters():
    with open(SOURCE) as f:
        tree = ast.parse(f.read())
    assert too_wide(tree) == []


def test_no_function_of_eval_takes_more_than_five_positional_parameters():
    with open(EVAL) as f:
        tree = ast.parse(f.read())
    assert too_wide(tree) == []


def test_the_check_sees_a_wide_function():
    """The check above can fail: it finds a six-parameter function and counts
    keyword-only parameters and self as not positional."""
    tree = ast.parse("def f(a, b, c, d, e, g): pass\n"
                     "def k(a, b, c, d, e, *, g): pass\n"
                     "class C:\n    def m(self, a, b, c, d, e): pass\n")
    assert [name for _, name, _ in too_wide(tree)] == ["f"]


def _used_names(node):
    """Names a node's code refers to: plain names and attributes (obj.name)."""
    used = collections.Counter()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            used[sub.id] += 1
        elif isinstance(sub, ast.Attribute):
            used[sub.attr] += 1
    return used


def dead_definitions(tree, other_texts):
    """(line, name) of every top-level function or class that no code in the module refers
    to (its own body, recursion, does not count) and no other text names as a word."""
    used = _used_names(tree)
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if used[node.name] - _used_names(node)[node.name] > 0:
            continue
        word = re.compile(r"\b%s\b" % re.escape(node.name))
        if not any(word.search(text) for text in other_texts):
            found.append((node.lineno, node.name))
    return found


def _other_texts():
    """The tests and eval.py: what they call is used, even if gpualert.py does not call it."""
    paths = glob.glob(os.path.join(HERE, "**", "*.py"), recursive=True) + [EVAL]
    texts = []
    for path in paths:
        with open(path) as f:
            texts.append(f.read())
    return texts


def test_no_top_level_function_of_gpualert_is_dead():
    with open(SOURCE) as f:
        tree = ast.parse(f.read())
    assert dead_definitions(tree, _other_texts()) == []


def test_the_check_sees_a_dead_function():
    """It fails on a function nothing calls, or only itself calls; one a test calls, one a
    handler table names and a class that is used all count as alive."""
    tree = ast.parse("def dead(): pass\n"
                     "def loop(n): return loop(n - 1)\n"
                     "def for_tests(): pass\n"
                     "def cmd_x(args): pass\n"
                     "HANDLERS = {'x': cmd_x}\n"
                     "class Rec(object): pass\n"
                     "def make(): return Rec()\n"
                     "def main(): return make()\n"
                     "if __name__ == '__main__': main()\n")
    found = dead_definitions(tree, ["G.for_tests()"])
    assert [name for _, name in found] == ["dead", "loop"]


def test_root_only_tests_say_so_with_the_mark_the_root_pass_selects():
    """A test that skips unless root must carry needs_root: CI's user pass skips it and the
    root pass runs `-m needs_root`, so a bare skipif on the uid would run nowhere."""
    bare = re.compile(r"skipif\(\s*os\.geteuid\(\)")
    found = []
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        with open(path) as f:
            found += ["%s:%d" % (os.path.basename(path), n) for n, line in enumerate(f, 1) if bare.search(line)]
    assert found == []


# ---- Layers: sections refer only downward, and pure sections do no I/O (issue 19) ----

def _sections(source):
    """[(first line, title)] of the `# ==== Title ====` banners."""
    return [(i + 1, line[len("# ==== "):].rstrip(" ="))
            for i, line in enumerate(source.splitlines()) if line.startswith("# ==== ")]


def _section_index(banners, lineno):
    index = -1
    for i, (first, _) in enumerate(banners):
        if first <= lineno:
            index = i
    return index


def _top_level_names(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def upward_references(source):
    """(definition, name it uses, that name's later section) for every top-level definition
    that names a top-level definition of a later section."""
    tree, banners = ast.parse(source), _sections(source)
    home = {}
    for node in tree.body:
        for name in _top_level_names(node):
            home.setdefault(name, _section_index(banners, node.lineno))
    found = []
    for node in tree.body:
        mine = _section_index(banners, node.lineno)
        for name in sorted(set(n.id for n in ast.walk(node) if isinstance(n, ast.Name))):
            if home.get(name, -1) > mine:
                found.append(((_top_level_names(node) or ["?"])[0], name, banners[home[name]][1]))
    return found


#: What a pure section may not call: the filesystem, processes, sockets, the terminal.
IO_MODULES = {"os", "subprocess", "glob", "socket", "shutil", "tempfile", "fcntl", "select",
              "signal", "pwd", "grp", "resource"}
IO_BUILTINS = {"open", "print", "input"}
PURE_OS = {"os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext",
           "os.path.normpath", "os.path.split", "os.path.isabs", "os.path.relpath",
           "os.path.commonpath", "os.path.normcase", "os.strerror", "os.fspath", "os.urandom",
           "os.WIFSIGNALED", "os.WTERMSIG", "os.WEXITSTATUS", "os.WIFEXITED"}


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else None


def io_in_pure_sections(source):
    """(line, definition, call) for every I/O call inside a `Pure core` section."""
    tree, banners = ast.parse(source), _sections(source)
    found = []
    for node in tree.body:
        index = _section_index(banners, node.lineno)
        if index < 0 or not banners[index][1].startswith("Pure core"):
            continue
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            name = _dotted(call.func)
            if name and (name in IO_BUILTINS or (name.split(".")[0] in IO_MODULES and name not in PURE_OS)):
                found.append((call.lineno, (_top_level_names(node) or ["?"])[0], name))
    return found


def _source():
    with open(SOURCE) as f:
        return f.read()


def test_sections_refer_only_to_their_own_or_earlier_sections():
    assert upward_references(_source()) == []


def test_pure_sections_touch_no_file_and_run_no_process():
    assert io_in_pure_sections(_source()) == []


def test_the_layer_checks_can_fail():
    source = ("# ==== Pure core: a ====\n"
              "def low():\n    return high() + len(open('x').read())\n"
              "# ==== Edges: b ====\n"
              "def high():\n    return os.path.join('a', 'b')\n")
    assert upward_references(source) == [("low", "high", "Edges: b")]
    assert io_in_pure_sections(source) == [(3, "low", "open")]
def module_state_writes(tree):
    """(line, name) where a function writes into a module-level container (NAME[k] = v,
    NAME[k] += v) instead of taking the state as a parameter."""
    top = set(t.id for node in tree.body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        local = set(a.arg for a in func.args.args + func.args.kwonlyargs)
        local |= set(t.id for node in ast.walk(func) if isinstance(node, ast.Assign)
                     for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(func):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, ast.AugAssign) else [])
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
                        t.value.id in top and t.value.id not in local:
                    found.append((node.lineno, t.value.id))
    return found


def test_eval_keeps_no_module_level_state():
    with open(EVAL) as f:
        tree = ast.parse(f.read())
    assert module_state_writes(tree) == []


def test_the_check_sees_module_level_state():
    tree = ast.parse("_STATE = {'dir': None}\nCONST = {}\n"
                     "def set_dir(d):\n    _STATE['dir'] = d\n"
                     "def fine(args):\n    CONST = {}\n    CONST['x'] = 1\n    args['y'] = 2\n")
    assert module_state_writes(tree) == [(4, "_STATE")]
