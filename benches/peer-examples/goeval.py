"""A small evaluator for the subset of Go that gitleaks' rule generators use.

gitleaks keeps each rule's true and false positives as Go code in
cmd/generate/config/rules/*.go: string slices, `append`, `fmt.Sprintf`, its own helpers
(`utils.GenerateSampleSecrets`, `utils.Hex`, ...) and `secrets.NewSecret(regex)`, which makes a
random string from a regex at run time. This module reads that Go (tokens with Go's semicolon
rule, an expression/statement parser, a tree-walking evaluator) so the examples can be taken out
without building or running gitleaks. The helpers are evaluated from gitleaks' own source, not
copied; only the standard library calls they use (`fmt.Sprintf`, `strings`, `base64`, `regexp`)
and `secrets.NewSecret` are written here. `NewSecret` is re-implemented in Python after
lucasjones/reggen (limit 1, as gitleaks calls it) with a seeded `random.Random`, so the generated
examples are the same on every run (but not the same strings a gitleaks build would produce).

An expression it cannot evaluate raises GoError; callers skip that element and count it.
"""
import base64
import random
import re
import re._parser as sre_parse  # Python 3.11+
import re._constants as sre_c

# --------------------------------------------------------------------------- tokens

KEYWORDS = {"break", "case", "chan", "const", "continue", "default", "defer", "else",
            "fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map",
            "package", "range", "return", "select", "struct", "switch", "type", "var"}
OPS = sorted("""... <<= >>= &^= := == != <= >= && || <- ++ -- += -= *= /= %= &= |= ^= << >> &^
+ - * / % & | ^ < > = ! ( ) [ ] { } , ; . :""".split(), key=len, reverse=True)
ESC = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34}


class GoError(Exception):
    pass


class Tok:
    __slots__ = ("kind", "val", "line")

    def __init__(self, kind, val, line):
        self.kind, self.val, self.line = kind, val, line

    def __repr__(self):
        return f"{self.kind}:{self.val!r}@{self.line}"


def unquote(body):
    """Body of a Go interpreted string literal -> str."""
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e in ESC:
            out.append(ESC[e]); i += 2
        elif e == "x":
            out.append(int(body[i + 2:i + 4], 16)); i += 4
        elif e in "01234567":
            out.append(int(body[i + 1:i + 4], 8)); i += 4
        elif e == "u":
            out += chr(int(body[i + 2:i + 6], 16)).encode(); i += 6
        elif e == "U":
            out += chr(int(body[i + 2:i + 10], 16)).encode(); i += 10
        else:
            raise GoError(f"bad escape \\{e}")
    return out.decode("utf-8", "replace")


def tokenize(src):
    toks, i, line, n = [], 0, 1, len(src)

    def semi():
        if toks:
            t = toks[-1]
            if t.kind in ("ident", "str", "int", "char") or (
                    t.kind == "kw" and t.val in ("break", "continue", "fallthrough", "return")) or (
                    t.kind == "op" and t.val in (")", "]", "}", "++", "--")):
                toks.append(Tok("op", ";", line))

    while i < n:
        c = src[i]
        if c == "\n":
            semi(); line += 1; i += 1
        elif c in " \t\r":
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.index("*/", i + 2)
            if "\n" in src[i:j]:
                semi(); line += src.count("\n", i, j)
            i = j + 2
        elif c == "`":
            j = src.index("`", i + 1)
            toks.append(Tok("str", src[i + 1:j].replace("\r", ""), line))
            line += src.count("\n", i, j)
            i = j + 1
        elif c == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            toks.append(Tok("str", unquote(src[i + 1:j]), line))
            i = j + 1
        elif c == "'":
            j = i + 1
            while src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            s = unquote(src[i + 1:j]) if src[i + 1] == "\\" else src[i + 1:j]
            toks.append(Tok("char", ord(s), line))
            i = j + 1
        elif c.isdigit():
            m = re.match(r"0[xX][0-9a-fA-F_]+|[0-9_]+(?:\.[0-9]+)?", src[i:])
            toks.append(Tok("int", int(m.group().replace("_", ""), 0) if "." not in m.group()
                            else float(m.group()), line))
            i += len(m.group())
        elif c.isalpha() or c == "_":
            m = re.match(r"\w+", src[i:])
            w = m.group()
            toks.append(Tok("kw" if w in KEYWORDS else "ident", w, line))
            i += len(w)
        else:
            for op in OPS:
                if src.startswith(op, i):
                    toks.append(Tok("op", op, line)); i += len(op); break
            else:
                raise GoError(f"line {line}: unexpected {c!r}")
    semi()
    return toks


# --------------------------------------------------------------------------- parser
# Expressions are tuples: ('lit', v) ('name', n) ('sel', x, n) ('call', f, args, spread)
# ('index', x, i) ('slice', x, lo, hi) ('bin', op, a, b) ('un', op, x)
# ('comp', type, [(key, value)]) ('type', t) ('func', params, body)
# Types: ('slice', t) ('array', t) ('map', k, v) ('ptr', t) ('named', 'pkg.Name' or 'Name')

PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
        "+": 4, "-": 4, "|": 4, "^": 4, "*": 5, "/": 5, "%": 5, "<<": 5, ">>": 5, "&": 5, "&^": 5}


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    # helpers
    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else Tok("eof", None, -1)

    def at(self, val, k=0):
        t = self.peek(k)
        return t.kind in ("op", "kw") and t.val == val

    def take(self, val=None):
        t = self.peek()
        if val is not None and not (t.kind in ("op", "kw") and t.val == val):
            raise GoError(f"line {t.line}: expected {val!r}, got {t.val!r}")
        self.i += 1
        return t

    def skip_semis(self):
        while self.at(";"):
            self.i += 1

    def skip_balanced(self):
        """Skip one bracketed group starting at the current token."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = 0
        while True:
            t = self.take()
            if t.kind == "op" and t.val in pairs:
                depth += 1
            elif t.kind == "op" and t.val in pairs.values():
                depth -= 1
                if depth == 0:
                    return

    # top level
    def file(self):
        decls = {"funcs": {}, "vars": []}
        while self.peek().kind != "eof":
            self.skip_semis()
            t = self.peek()
            if t.kind == "eof":
                break
            if t.val in ("package",):
                self.take(); self.take(); continue
            if t.val == "import":
                self.take()
                if self.at("("):
                    self.take("(")
                    imps = []
                    while not self.at(")"):
                        self.skip_semis()
                        if self.at(")"):
                            break
                        imps.append(self.import_spec())
                    self.take(")")
                else:
                    imps = [self.import_spec()]
                decls.setdefault("imports", []).extend(imps)
                continue
            if t.val in ("var", "const"):
                self.take()
                if self.at("("):
                    self.take("(")
                    while not self.at(")"):
                        self.skip_semis()
                        if self.at(")"):
                            break
                        decls["vars"].append(self.var_spec())
                    self.take(")")
                else:
                    decls["vars"].append(self.var_spec())
                continue
            if t.val == "type":
                self.take(); self.take(); self.type_()
                continue
            if t.val == "func":
                self.take()
                if self.at("("):  # method: skip
                    self.skip_balanced(); self.take()
                    self.skip_balanced()
                    while not self.at("{"):
                        self.take()
                    self.skip_balanced()
                    continue
                name = self.take().val
                params = self.params()
                self.results()
                body = self.block()
                decls["funcs"][name] = (params, body)
                continue
            raise GoError(f"line {t.line}: unexpected top-level {t.val!r}")
        return decls

    def import_spec(self):
        alias = None
        if self.peek().kind == "ident" or self.at("."):
            alias = self.take().val
        path = self.take().val
        self.skip_semis()
        return alias or path.rsplit("/", 1)[-1], path

    def var_spec(self):
        names = [self.take().val]
        while self.at(","):
            self.take(); names.append(self.take().val)
        typ = None
        if not self.at("=") and not self.at(";"):
            typ = self.type_()
        vals = []
        if self.at("="):
            self.take()
            vals = self.expr_list()
        self.skip_semis()
        return names, typ, vals

    def params(self):
        self.take("(")
        groups, names = [], []
        while not self.at(")"):
            if self.peek().kind == "ident" and (self.at(",", 1) or self.at(")", 1)):
                names.append(self.take().val)
            elif self.peek().kind == "ident":
                names.append(self.take().val)
                if self.at("..."):
                    self.take()
                self.type_()
                groups.extend(names); names = []
            else:
                self.type_()
            if self.at(","):
                self.take()
        self.take(")")
        return groups + names

    def results(self):
        if self.at("{"):
            return
        if self.at("("):
            self.skip_balanced()
        else:
            self.type_()

    def type_(self):
        t = self.peek()
        if self.at("["):
            self.take("[")
            if self.at("]"):
                self.take("]"); return ("slice", self.type_())
            self.expr(); self.take("]")
            return ("array", self.type_())
        if self.at("map"):
            self.take(); self.take("[")
            k = self.type_(); self.take("]")
            return ("map", k, self.type_())
        if self.at("*"):
            self.take(); return ("ptr", self.type_())
        if self.at("func"):
            self.take(); self.params(); 
            if not (self.at(",") or self.at(")") or self.at("{") or self.at(";") or self.at("]")):
                self.results()
            return ("named", "func")
        if self.at("struct") or self.at("interface"):
            self.take(); self.skip_balanced(); return ("named", t.val)
        if self.at("chan"):
            self.take(); return ("chan", self.type_())
        if t.kind == "ident":
            self.take()
            name = t.val
            if self.at(".") and self.peek(1).kind == "ident":
                self.take(); name += "." + self.take().val
            return ("named", name)
        raise GoError(f"line {t.line}: expected a type, got {t.val!r}")

    # statements
    def block(self):
        self.take("{")
        stmts = []
        while True:
            self.skip_semis()
            if self.at("}"):
                break
            stmts.append(self.stmt())
        self.take("}")
        return stmts

    def stmt(self):
        t = self.peek()
        if t.kind == "kw":
            if t.val == "return":
                self.take()
                vals = [] if self.at(";") or self.at("}") else self.expr_list()
                return ("return", vals)
            if t.val in ("continue", "break"):
                self.take()
                if self.peek().kind == "ident":
                    self.take()
                return (t.val,)
            if t.val in ("var", "const"):
                self.take()
                if self.at("("):
                    self.take("(")
                    specs = []
                    while True:
                        self.skip_semis()
                        if self.at(")"):
                            break
                        specs.append(("var",) + self.var_spec())
                    self.take(")")
                    return ("block", specs, "same-scope")
                names, typ, vals = self.var_spec()
                return ("var", names, typ, vals)
            if t.val == "if":
                return self.if_()
            if t.val == "for":
                return self.for_()
            if t.val in ("switch", "select", "go", "defer", "type"):
                raise GoError(f"line {t.line}: unsupported statement {t.val}")
        if self.at("{"):
            return ("block", self.block())
        return self.simple()

    def simple(self, no_comp=False):
        lhs = self.expr_list(no_comp)
        if self.peek().kind == "op" and self.peek().val in (":=", "=", "+=", "-=", "|=", "*="):
            op = self.take().val
            if self.at("range"):
                self.take()
                return ("range", lhs, op, self.expr(no_comp))
            return ("assign", lhs, op, self.expr_list(no_comp))
        if self.at("++") or self.at("--"):
            op = self.take().val
            return ("assign", lhs, op[0] + "=", [("lit", 1)])
        return ("expr", lhs[0])

    def if_(self):
        self.take("if")
        init = None
        s = self.simple(no_comp=True)
        if self.at(";"):
            self.take(); init = s
            cond = self.expr(no_comp=True)
        else:
            cond = s[1]
        body = self.block()
        els = None
        if self.at("else"):
            self.take()
            els = [self.if_()] if self.at("if") else self.block()
        return ("if", init, cond, body, els)

    def for_(self):
        self.take("for")
        if self.at("{"):
            return ("for", None, None, None, self.block())
        if self.at("range"):
            self.take()
            x = self.expr(no_comp=True)
            return ("forrange", [], ":=", x, self.block())
        s = self.simple(no_comp=True)
        if s[0] == "range":
            return ("forrange", s[1], s[2], s[3], self.block())
        if self.at(";"):
            self.take()
            cond = None if self.at(";") else self.expr(no_comp=True)
            self.take(";")
            post = None if self.at("{") else self.simple(no_comp=True)
            return ("for", s, cond, post, self.block())
        return ("for", None, s[1], None, self.block())

    # expressions
    def expr_list(self, no_comp=False):
        out = [self.expr(no_comp)]
        while self.at(","):
            self.take()
            out.append(self.expr(no_comp))
        return out

    def expr(self, no_comp=False, prec=1):
        x = self.unary(no_comp)
        while True:
            t = self.peek()
            p = PREC.get(t.val) if t.kind == "op" else None
            if p is None or p < prec:
                return x
            self.take()
            y = self.expr(no_comp, p + 1)
            x = ("bin", t.val, x, y)

    def unary(self, no_comp):
        t = self.peek()
        if t.kind == "op" and t.val in ("!", "-", "+", "^", "&", "*", "<-"):
            self.take()
            return ("un", t.val, self.unary(no_comp))
        return self.primary(no_comp)

    def primary(self, no_comp):
        t = self.peek()
        if t.kind in ("str", "int", "char"):
            self.take(); x = ("lit", t.val)
        elif t.kind == "ident":
            self.take(); x = ("name", t.val)
        elif self.at("("):
            self.take(); x = self.expr(); self.take(")")
        elif self.at("[") or self.at("map") or self.at("struct"):
            x = ("type", self.type_())
        elif self.at("func"):
            self.take(); params = self.params()
            if not self.at("{"):
                self.results()
            x = ("func", params, self.block())
        else:
            raise GoError(f"line {t.line}: unexpected {t.val!r}")
        while True:
            if self.at("."):
                self.take()
                if self.at("("):  # type assertion
                    self.skip_balanced(); continue
                x = ("sel", x, self.take().val)
            elif self.at("("):
                self.take()
                args, spread = [], False
                while not self.at(")"):
                    self.skip_semis()
                    if self.at(")"):
                        break
                    if self.at("[") or self.at("map") or self.at("*"):
                        # a type as an argument (make([]string, 0))
                        save = self.i
                        try:
                            args.append(("type", self.type_()))
                            if not (self.at(",") or self.at(")") or self.at("{")):
                                raise GoError("not a type")
                            if self.at("{"):
                                self.i = save
                                args[-1] = self.expr()
                        except GoError:
                            self.i = save
                            args[-1:] = []
                            args.append(self.expr())
                    else:
                        args.append(self.expr())
                    if self.at("..."):
                        self.take(); spread = True
                    if self.at(","):
                        self.take()
                    self.skip_semis()
                self.take(")")
                x = ("call", x, args, spread)
            elif self.at("["):
                self.take("[")
                lo = None if self.at(":") else self.expr()
                if self.at(":"):
                    self.take()
                    hi = None if self.at("]") else self.expr()
                    self.take("]")
                    x = ("slice", x, lo, hi)
                else:
                    self.take("]")
                    x = ("index", x, lo)
            elif self.at("{") and (x[0] == "type" or (not no_comp and x[0] in ("name", "sel"))):
                x = ("comp", x, self.elements())
            else:
                return x

    def elements(self):
        self.take("{")
        out = []
        while True:
            self.skip_semis()
            if self.at("}"):
                break
            line = self.peek().line
            v = ("comp", None, self.elements()) if self.at("{") else self.expr()
            k = None
            if self.at(":"):
                self.take()
                k = v
                v = ("comp", None, self.elements()) if self.at("{") else self.expr()
            out.append((k, v, line))
            if self.at(","):
                self.take()
            else:
                self.skip_semis()
        self.take("}")
        return out


# --------------------------------------------------------------------------- values

class Struct:
    """A composite literal of a named type: fields kept unevaluated until read."""

    def __init__(self, tname, fields, interp, env):
        self.tname, self.fields, self.interp, self.env, self.cache = tname, fields, interp, env, {}

    def get(self, name):
        if name not in self.cache:
            if name not in self.fields:
                return None
            self.cache[name] = self.interp.eval(self.fields[name], self.env)
        return self.cache[name]

    def set(self, name, v):
        self.cache[name] = v


class Skip:
    """Stands for an example that could not be evaluated (kept so it can be counted)."""

    def __init__(self, reason, line=None):
        self.reason, self.line = reason, line

    def __iter__(self):
        yield self

    def __repr__(self):
        return f"Skip({self.reason!r}, line {self.line})"


class Native:
    def __init__(self, fn, name):
        self.fn, self.name = fn, name

    def __call__(self, *a):
        return self.fn(*a)


class Obj:
    """A native object with attributes (a package, a Replacer, a compiled regexp)."""

    def __init__(self, name, **attrs):
        self.name = name
        self.attrs = attrs


class Func:
    def __init__(self, name, params, body, env):
        self.name, self.params, self.body, self.env = name, params, body, env


class Return(Exception):
    def __init__(self, vals):
        self.vals = vals


class Continue(Exception):
    pass


class Break(Exception):
    pass


class Env:
    def __init__(self, parent=None):
        self.vars, self.parent = {}, parent

    def lookup(self, name):
        e = self
        while e is not None:
            if name in e.vars:
                return e.vars[name]
            e = e.parent
        raise GoError(f"undefined: {name}")

    def has(self, name):
        e = self
        while e is not None:
            if name in e.vars:
                return True
            e = e.parent
        return False

    def set(self, name, v):
        e = self
        while e is not None:
            if name in e.vars:
                e.vars[name] = v
                return
            e = e.parent
        raise GoError(f"assignment to undefined {name}")


# --------------------------------------------------------------------------- reggen

POSIX = {"[:alnum:]": "a-zA-Z0-9", "[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:lower:]": "a-z",
         "[:upper:]": "A-Z", "[:xdigit:]": "0-9a-fA-F", "[:space:]": r" \t\n\r\f\v",
         "[:punct:]": r"!-/:-@\[-`{-~", "[:word:]": r"\w"}
PRINTABLE = [chr(c) for c in range(32, 127)]
CATEGORY = {
    sre_c.CATEGORY_DIGIT: [chr(c) for c in range(48, 58)],
    sre_c.CATEGORY_WORD: [chr(c) for c in range(48, 58)] + [chr(c) for c in range(65, 91)]
    + [chr(c) for c in range(97, 123)] + ["_"],
    sre_c.CATEGORY_SPACE: list(" \t\n\r\f\v"),
}
CATEGORY[sre_c.CATEGORY_NOT_DIGIT] = [c for c in PRINTABLE if c not in CATEGORY[sre_c.CATEGORY_DIGIT]]
CATEGORY[sre_c.CATEGORY_NOT_WORD] = [c for c in PRINTABLE if c not in CATEGORY[sre_c.CATEGORY_WORD]]
CATEGORY[sre_c.CATEGORY_NOT_SPACE] = [c for c in PRINTABLE if c not in CATEGORY[sre_c.CATEGORY_SPACE]]


def go_to_py_regex(rx):
    rx = rx.replace(r"\z", r"\Z")
    for k, v in POSIX.items():
        rx = rx.replace(k, v)
    return rx


def class_chars(items):
    chars, negate = [], False
    for op, av in items:
        if op == sre_c.NEGATE:
            negate = True
        elif op == sre_c.LITERAL:
            chars.append(chr(av))
        elif op == sre_c.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op == sre_c.CATEGORY:
            chars.extend(CATEGORY[av])
        else:
            raise GoError(f"regex class item {op}")
    if negate:
        s = set(chars)
        chars = [c for c in PRINTABLE if c not in s]
    return chars


def reggen(rx, rng, limit=1):
    """A string matching the Go regex rx, after lucasjones/reggen's Generate(limit)."""
    tree = sre_parse.parse(go_to_py_regex(rx))
    out = []

    def gen(seq):
        for op, av in seq:
            if op == sre_c.LITERAL:
                out.append(chr(av))
            elif op == sre_c.NOT_LITERAL:
                out.append(rng.choice([c for c in PRINTABLE if ord(c) != av]))
            elif op == sre_c.ANY:
                out.append(rng.choice(PRINTABLE))
            elif op == sre_c.IN:
                out.append(rng.choice(class_chars(av)))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
                lo, hi, sub = av
                if hi == sre_c.MAXREPEAT:
                    hi = lo + limit
                for _ in range(rng.randint(lo, hi)):
                    gen(sub)
            elif op == sre_c.SUBPATTERN:
                gen(av[-1])
            elif op == sre_c.BRANCH:
                gen(rng.choice(av[1]))
            elif op == sre_c.AT:
                pass
            elif op == sre_c.CATEGORY:
                out.append(rng.choice(CATEGORY[av]))
            else:
                raise GoError(f"regex op {op} in {rx!r}")
    gen(tree)
    return "".join(out)


# --------------------------------------------------------------------------- Go formatting

def go_quote(s):
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_str(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + " ".join(go_str(x) for x in v) + "]"
    return str(v)


def sprintf(fmt, *args):
    args = list(args)
    out, i = [], 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c); i += 1; continue
        m = re.match(r"%([-+# 0]*)(\d*)(?:\.(\d+))?([a-zA-Z%])", fmt[i:])
        if not m:
            raise GoError(f"format {fmt!r}")
        flags, width, prec, verb = m.groups()
        i += len(m.group())
        if verb == "%":
            out.append("%"); continue
        v = args.pop(0)
        if verb in ("s", "v"):
            s = go_str(v)
        elif verb == "d":
            s = str(int(v))
        elif verb == "q":
            s = go_quote(go_str(v))
        elif verb == "x":
            s = v.hex() if isinstance(v, bytes) else (
                v.encode().hex() if isinstance(v, str) else format(v, "x"))
        else:
            raise GoError(f"format verb %{verb}")
        if width:
            s = s.ljust(int(width)) if "-" in flags else s.rjust(int(width), "0" if "0" in flags else " ")
        out.append(s)
    return "".join(out)


# --------------------------------------------------------------------------- interpreter

def _b(v):
    return v if isinstance(v, bytes) else go_str(v).encode()


def stdlib(interp):
    def enc(f):
        return Obj("enc", EncodeToString=Native(lambda b: f(_b(b)).decode(), "EncodeToString"))

    b64 = Obj("base64",
              StdEncoding=enc(base64.b64encode),
              RawStdEncoding=enc(lambda b: base64.b64encode(b).rstrip(b"=")),
              URLEncoding=enc(base64.urlsafe_b64encode),
              RawURLEncoding=enc(lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")))

    def replacer(*pairs):
        def rep(s):
            out, i = [], 0
            while i < len(s):
                for old, new in zip(pairs[::2], pairs[1::2]):
                    if old and s.startswith(old, i):
                        out.append(new); i += len(old); break
                else:
                    out.append(s[i]); i += 1
            return "".join(out)
        return Obj("Replacer", Replace=Native(rep, "Replace"))

    def compile_(rx):
        py = re.compile(go_to_py_regex(rx))
        return Obj("Regexp", MatchString=Native(lambda s: py.search(s) is not None, "MatchString"),
                   String=Native(lambda: rx, "String"))

    return {
        "fmt": Obj("fmt", Sprintf=Native(sprintf, "Sprintf")),
        "strings": Obj("strings",
                       NewReplacer=Native(replacer, "NewReplacer"),
                       Repeat=Native(lambda s, n: s * n, "Repeat"),
                       ToUpper=Native(str.upper, "ToUpper"), ToLower=Native(str.lower, "ToLower"),
                       Join=Native(lambda xs, sep: sep.join(xs), "Join"),
                       TrimSpace=Native(str.strip, "TrimSpace"),
                       ReplaceAll=Native(lambda s, a, b: s.replace(a, b), "ReplaceAll"),
                       Contains=Native(lambda s, a: a in s, "Contains")),
        "encoding/base64": b64,
        "regexp": Obj("regexp", MustCompile=Native(compile_, "MustCompile")),
        "github.com/zricethezav/gitleaks/v8/regexp": Obj(
            "regexp", MustCompile=Native(compile_, "MustCompile")),
        "github.com/zricethezav/gitleaks/v8/cmd/generate/secrets": Obj(
            "secrets", NewSecret=Native(lambda rx: reggen(rx, interp.rng), "NewSecret")),
    }


class Interp:
    """Packages are loaded from source; a package is an Env of its globals and funcs."""

    def __init__(self, seed="gitleaks"):
        self.rng = random.Random(seed)
        self.natives = stdlib(self)
        self.packages = {}  # import path -> Env
        self.hooks = {}     # 'pkgpath.Name' -> python callable taking evaluated args
        self.methods = {}   # ('pkg.Type', 'Method') -> python callable (struct, *args)

    def load(self, path, sources):
        """Load a package from a list of source texts; globals are evaluated lazily on first use."""
        env = Env()
        env.lazy = {}
        imports = {}
        for src in sources:
            decls = Parser(tokenize(src)).file()
            fenv = Env(env)  # per-file import scope
            for alias, ipath in decls.get("imports", []):
                fenv.vars[alias] = ("import", ipath)
            for name, (params, body) in decls["funcs"].items():
                env.vars[name] = Func(name, params, body, fenv)
            for names, typ, vals in decls["vars"]:
                for k, nm in enumerate(names):
                    env.lazy[nm] = (vals[k] if k < len(vals) else None, fenv)
        self.packages[path] = env
        return env

    def resolve_import(self, ipath):
        if ipath in self.packages:
            return ("pkg", ipath)
        if ipath in self.natives:
            return self.natives[ipath]
        return ("pkg", ipath)  # unknown package; members fail when used

    def lookup(self, name, env):
        e = env
        while e is not None:
            if name in e.vars:
                return e.vars[name]
            lazy = getattr(e, "lazy", None)
            if lazy and name in lazy:
                expr, fenv = lazy.pop(name)
                e.vars[name] = None if expr is None else self.eval(expr, fenv)
                return e.vars[name]
            e = e.parent
        if name in BUILTINS:
            return BUILTINS[name]
        raise GoError(f"undefined: {name}")

    # statements
    def run(self, stmts, env):
        for s in stmts:
            self.exec(s, env)

    def exec(self, s, env):
        k = s[0]
        if k == "expr":
            self.eval(s[1], env)
        elif k == "assign":
            _, lhs, op, rhs = s
            try:
                vals = [self.eval(x, env) for x in rhs]
            except GoError as e:
                if op not in (":=", "="):
                    raise
                vals = [Skip(str(e), rhs[0] and self.line_of(rhs[0]))] * len(lhs)
            if len(rhs) == 1 and len(lhs) > 1:
                vals = list(vals[0])
            for target, v in zip(lhs, vals):
                self.assign(target, op, v, env)
        elif k == "var":
            _, names, typ, vals = s
            vs = [self.eval(x, env) for x in vals] or [zero(typ)] * len(names)
            for n, v in zip(names, vs):
                env.vars[n] = v
        elif k == "return":
            raise Return([self.eval(x, env) for x in s[1]])
        elif k == "if":
            _, init, cond, body, els = s
            ienv = Env(env)
            if init:
                self.exec(init, ienv)
            if self.eval(cond, ienv):
                self.run(body, Env(ienv))
            elif els:
                self.run(els, Env(ienv))
        elif k == "forrange":
            _, lhs, op, x, body = s
            coll = self.eval(x, env)
            items = list(coll.items()) if isinstance(coll, dict) else list(enumerate(coll))
            for key, val in items:
                benv = Env(env)
                for target, v in zip(lhs, (key, val)):
                    self.assign(target, op, v, benv)
                try:
                    self.run(body, benv)
                except Continue:
                    continue
                except Break:
                    break
        elif k == "for":
            _, init, cond, post, body = s
            fenv = Env(env)
            if init:
                self.exec(init, fenv)
            guard = 0
            while cond is None or self.eval(cond, fenv):
                guard += 1
                if guard > 100000:
                    raise GoError("loop does not end")
                try:
                    self.run(body, Env(fenv))
                except Continue:
                    pass
                except Break:
                    break
                if post:
                    self.exec(post, fenv)
        elif k == "continue":
            raise Continue()
        elif k == "break":
            raise Break()
        elif k == "block":
            self.run(s[1], env if len(s) > 2 else Env(env))
        else:
            raise GoError(f"statement {k}")

    def assign(self, target, op, v, env):
        if target[0] == "name":
            n = target[1]
            if n == "_":
                return
            if op == ":=":
                env.vars[n] = v
            elif op == "=":
                env.set(n, v)
            elif op == "+=":
                env.set(n, self.binop("+", self.lookup(n, env), v))
            elif op == "-=":
                env.set(n, self.binop("-", self.lookup(n, env), v))
            else:
                raise GoError(f"assign op {op}")
        elif target[0] == "sel":
            obj = self.eval(target[1], env)
            if isinstance(obj, Struct):
                obj.set(target[2], v)
            else:
                raise GoError("field assignment on a non-struct")
        elif target[0] == "index":
            coll = self.eval(target[1], env)
            coll[self.eval(target[2], env)] = v
        else:
            raise GoError(f"assign to {target[0]}")

    # expressions
    def eval(self, x, env):
        k = x[0]
        if k == "lit":
            return x[1]
        if k == "name":
            v = self.lookup(x[1], env)
            if isinstance(v, tuple) and v and v[0] == "import":
                return self.resolve_import(v[1])
            return v
        if k == "sel":
            base = self.eval(x[1], env)
            return self.select(base, x[2])
        if k == "call":
            return self.call(x, env)
        if k == "bin":
            if x[1] == "&&":
                return bool(self.eval(x[2], env)) and bool(self.eval(x[3], env))
            if x[1] == "||":
                return bool(self.eval(x[2], env)) or bool(self.eval(x[3], env))
            return self.binop(x[1], self.eval(x[2], env), self.eval(x[3], env))
        if k == "un":
            v = self.eval(x[2], env)
            if x[1] == "!":
                return not v
            if x[1] == "-":
                return -v
            if x[1] in ("&", "*"):
                return v
            raise GoError(f"unary {x[1]}")
        if k == "index":
            coll = self.eval(x[1], env)
            i = self.eval(x[2], env)
            return coll[i]
        if k == "slice":
            coll = self.eval(x[1], env)
            lo = 0 if x[2] is None else self.eval(x[2], env)
            hi = len(coll) if x[3] is None else self.eval(x[3], env)
            return coll[lo:hi]
        if k == "comp":
            return self.composite(x[1], x[2], env)
        if k == "type":
            return x
        if k == "func":
            return Func("<lit>", x[1], x[2], env)
        raise GoError(f"expression {k}")

    def select(self, base, name):
        if isinstance(base, tuple) and base and base[0] == "pkg":
            penv = self.packages.get(base[1])
            if penv is None:
                raise GoError(f"package {base[1]} not loaded")
            hook = self.hooks.get(base[1] + "." + name)
            if hook is not None:
                return Native(hook, name)
            return self.lookup(name, penv)
        if isinstance(base, Obj):
            if name not in base.attrs:
                raise GoError(f"{base.name}.{name} is not supported")
            return base.attrs[name]
        if isinstance(base, Struct):
            m = self.methods.get((base.tname, name))
            if m is not None:
                return Native(lambda *a: m(base, *a), name)
            return base.get(name)
        raise GoError(f"select .{name} on {type(base).__name__}")

    def call(self, x, env):
        _, fx, argx, spread = x
        if fx[0] == "type" or (fx[0] == "name" and fx[1] in ("string",)):
            t = fx[1] if fx[0] == "type" else ("named", fx[1])
            v = self.eval(argx[0], env)
            if t == ("slice", ("named", "byte")):
                return _b(v)
            if t == ("named", "string"):
                return go_str(v) if not isinstance(v, int) else chr(v)
            raise GoError(f"conversion to {t}")
        if fx[0] == "name" and fx[1] == "make":
            t = argx[0][1] if argx[0][0] == "type" else None
            return {} if t and t[0] == "map" else []
        f = self.eval(fx, env)
        args = []
        for n, a in enumerate(argx):
            if isinstance(f, Native) and f.name == "append" and n > 0:
                try:
                    args.append(self.eval(a, env))
                except GoError as e:
                    args.append(Skip(str(e), self.line_of(a)))
            else:
                args.append(self.eval(a, env))
        if spread:
            last = args.pop()
            if isinstance(f, Native) and f.name == "append":
                args.extend(last)
            else:
                args.append(list(last))
        if isinstance(f, Native):
            return f(*args)
        if isinstance(f, Func):
            return self.invoke(f, args)
        raise GoError(f"call of {type(f).__name__}")

    def invoke(self, f, args):
        fenv = Env(f.env)
        for n, v in zip(f.params, args):
            fenv.vars[n] = v
        try:
            self.run(f.body, fenv)
        except Return as r:
            return r.vals[0] if len(r.vals) == 1 else (tuple(r.vals) if r.vals else None)
        return None

    def binop(self, op, a, b):
        if op == "+":
            if isinstance(a, bytes) or isinstance(b, bytes):
                return _b(a) + _b(b)
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b
        if op == ">":
            return a > b
        if op == "<=":
            return a <= b
        if op == ">=":
            return a >= b
        if op == "%":
            return a % b
        raise GoError(f"operator {op}")

    def composite(self, tx, elems, env, outer=None):
        t = tx[1] if tx and tx[0] == "type" else tx
        if t is None:
            t = outer
        if t is not None and t[0] == "ptr":
            t = t[1]
        if t is not None and t[0] in ("slice", "array"):
            out = []
            for key, val, line in elems:
                out.append(self.element(val, env, t[1], line))
            return out
        if t is not None and t[0] == "map":
            out = {}
            for key, val, line in elems:
                kv = self.eval(key, env)
                out[kv] = self.element(val, env, t[2], line)
            return out
        # a named type (struct), or nested elided types we do not know
        name = None
        if tx and tx[0] == "name":
            name = tx[1]
        elif tx and tx[0] == "sel" and tx[1][0] == "name":
            name = tx[1][1] + "." + tx[2]
        fields = {}
        for key, val, line in elems:
            if key is not None and key[0] == "name":
                fields[key[1]] = val
        return Struct(name or "?", fields, self, env)

    def element(self, val, env, elem_type, line):
        if val[0] == "comp" and val[1] is None:
            return self.composite(None, val[2], env, outer=elem_type)
        v = self.element_value(val, env, line)
        return v

    def element_value(self, val, env, line):
        """One element of a slice or map literal; a failure becomes a Skip to be counted."""
        try:
            return self.eval(val, env)
        except GoError as e:
            return Skip(str(e), line)

    def line_of(self, x):
        """Source line of an expression for skip reports: expressions keep none, so None."""
        return None


def zero(typ):
    if typ is None:
        return None
    if typ[0] in ("slice", "array"):
        return []
    if typ[0] == "map":
        return {}
    if typ == ("named", "string"):
        return ""
    if typ == ("named", "int"):
        return 0
    if typ == ("named", "bool"):
        return False
    return None


def _append(xs, *more):
    return list(xs or []) + list(more)


BUILTINS = {
    "append": Native(_append, "append"),
    "len": Native(len, "len"),
    "nil": None,
    "true": True,
    "false": False,
}
