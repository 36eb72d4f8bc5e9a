"""The shape of gpualert.py that issue 8 asks to keep: no function takes more
than five positional parameters, so a call site cannot silently swap two of
them. Extra parameters go keyword-only (`*,`) or into a small record."""
import ast
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, os.pardir, "gpualert.py")
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


def test_the_check_sees_a_wide_function():
    """The check above can fail: it finds a six-parameter function and counts
    keyword-only parameters and self as not positional."""
    tree = ast.parse("def f(a, b, c, d, e, g): pass\n"
                     "def k(a, b, c, d, e, *, g): pass\n"
                     "class C:\n    def m(self, a, b, c, d, e): pass\n")
    assert [name for _, name, _ in too_wide(tree)] == ["f"]
