"""The tuning space of a `#[tunable]` kernel, read from its Rust source.

The Kernel Tuner comparison must tune the same space as ours: rather than a second copy that
could drift, the parameters, constraints and default are read from the `#[tunable(...)]`
attribute in the example (`examples/gemm_cuda.rs`). Constraints in tunable's expression language
that the examples use (`%`, `*`, chained `<=`, `and`/`or`, `==`) are Python expressions too, which
is how Kernel Tuner takes its restrictions.
"""

import itertools
import re


def read_attribute(path):
    """The text between `#[tunable(` and its closing `)]`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("#[tunable(")
    depth, i = 0, start + len("#[tunable")
    while True:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start + len("#[tunable(") : i]
        i += 1


def parse(path):
    """(params, constraints, default): params an ordered dict name -> list of ints, constraints a
    list of strings, default a dict (empty when the attribute names none)."""
    attr = read_attribute(path)
    # Line comments would hide nothing we parse, but drop them so their text cannot match.
    attr = "\n".join(line.split("//")[0] for line in attr.splitlines())
    params = {}
    for name, values in re.findall(r"\b(\w+)\s*=\s*\[([^\]]*)\]", attr):
        params[name] = [int(v) for v in values.replace(" ", "").split(",") if v]
    constraints = re.findall(r'constraint\s*=\s*"([^"]*)"', attr)
    default = {}
    m = re.search(r"default\s*=\s*\(([^)]*)\)", attr)
    if m:
        for name, value in re.findall(r"(\w+)\s*=\s*(-?\d+)", m.group(1)):
            default[name] = int(value)
    return params, constraints, default


def valid(params, constraints):
    """Every configuration (a dict) that satisfies the constraints, in Cartesian order."""
    names = list(params)
    out = []
    for values in itertools.product(*params.values()):
        config = dict(zip(names, values))
        if all(eval(c, {}, dict(config)) for c in constraints):  # noqa: S307 (our own source)
            out.append(config)
    return out


if __name__ == "__main__":
    import sys

    p, c, d = parse(sys.argv[1] if len(sys.argv) > 1 else "examples/gemm_cuda.rs")
    print(p, c, d, sep="\n")
    print(len(valid(p, c)), "valid configurations")
