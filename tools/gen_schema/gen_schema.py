#!/usr/bin/env python3
"""Writes graph/schema/onnx_schemas.inc: the operator schema table onnxflow checks at load.

The source is the ONNX specification's operator changelogs (docs/Changelog.md and
docs/Changelog-ml.md of onnx/onnx, which list every version of every operator with its
attributes, inputs, outputs and type constraints). They are not kept in this repository:

    git -C ONNX_CHECKOUT show v1.23.0:docs/Changelog.md > /tmp/Changelog.md
    git -C ONNX_CHECKOUT show v1.23.0:docs/Changelog-ml.md > /tmp/Changelog-ml.md
    tools/gen_schema/gen_schema.py /tmp/Changelog.md /tmp/Changelog-ml.md > graph/schema/onnx_schemas.inc

Each entry is one (domain, op, since_version) with its attributes (name, type, required, default
as written in the spec), input and output counts (min, max; -1 for variadic) and each formal
input's and output's type string, so that a reader can check a line against the spec.
Restrictions on values that the spec states only in prose (Scan directions, Split num_outputs,
...) are in graph/schema/value_rules.cc, by hand.
"""
import html
import re
import sys

ATTR_TYPES = {
    "int": "kInt", "float": "kFloat", "string": "kString", "tensor": "kTensor", "graph": "kGraph",
    "sparse_tensor": "kSparseTensor", "type_proto": "kTypeProto",
    "list of ints": "kInts", "list of floats": "kFloats", "list of strings": "kStrings",
    "list of tensors": "kTensors", "list of graphs": "kGraphs", "list of sparse_tensors": "kSparseTensors",
    "list of type_protos": "kTypeProtos", "list of graphs": "kGraphs",
}
DOMAINS = {"ai.onnx (default)": "", "ai.onnx.ml": "ai.onnx.ml", "ai.onnx.preview": "ai.onnx.preview",
           "ai.onnx.preview.training": "ai.onnx.preview.training"}


def b(flag):
    return "true" if flag else "false"


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def split_types(text):
    """'map(int64, float), tensor(float)' -> ['map(int64, float)', 'tensor(float)']: commas inside
    parentheses belong to a map's or sequence's type."""
    types, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            types.append(text[start:i].strip())
            start = i + 1
    types.append(text[start:].strip())
    return [t for t in types if t]


def parse_dl(lines):
    """The <dt> lines of a <dl> block: (name, rest) pairs."""
    out = []
    for line in lines:
        m = re.match(r"<dt><tt>([^<]*)</tt>(.*?)</dt>", line)
        if m:
            out.append((html.unescape(m.group(1)), html.unescape(m.group(2))))
    return out


def parse_count(header, n_listed, entries):
    m = re.search(r"\((\d+) - ([^)]*)\)", header)
    if m:
        low = int(m.group(1))
        high = -1 if m.group(2).strip() in ("&#8734;", "\u221e") else int(m.group(2))
        return low, high
    return n_listed, n_listed


def parse(path):
    schemas = []
    domain = None
    text = open(path, encoding="utf-8").read().split("\n")
    i = 0
    current = None
    section = None
    block = []

    def finish_block():
        nonlocal block
        if current is None or section is None:
            block = []
            return
        kind, header = section
        dts = parse_dl(block)
        if kind == "attributes":
            for name, rest in dts:
                m = re.match(r"\s*:\s*(.*?)(?:\s*\((required|default is (.*))\))?\s*$", rest)
                if not m:
                    sys.exit(f"cannot read attribute {name} of {current['op']}: {rest!r}")
                type_text = m.group(1).strip()
                if type_text not in ATTR_TYPES:
                    sys.exit(f"unknown attribute type {type_text!r} ({current['op']}.{name})")
                current["attrs"].append((name, ATTR_TYPES[type_text], m.group(2) == "required", m.group(3)))
        elif kind in ("inputs", "outputs"):
            formals = []
            for name, rest in dts:
                m = re.match(r"\s*(?:\(([^)]*)\))?\s*:\s*(.*)$", rest)
                flags = (m.group(1) or "") if m else ""
                formals.append((name, "optional" in flags, "variadic" in flags, "heterogeneous" in flags,
                                m.group(2).strip() if m else ""))
            low, high = parse_count(header, len(formals), formals)
            current[kind] = (low, high, formals)
        elif kind == "types":
            for name, rest in dts:
                types = split_types(rest.lstrip(" :"))
                current["types"].append((name, types))
        block = []

    while i < len(text):
        line = text[i]
        if line.startswith("# "):
            finish_block()
            section = None
            domain = DOMAINS.get(line[2:].strip())
        m = re.match(r'### <a name="([^"]+)-(\d+)"></a>\*\*[^*]*\*\*( \(deprecated\))?', line)
        if m and domain is not None:
            finish_block()
            section = None
            current = {"domain": domain, "op": m.group(1).split(".")[-1], "since": int(m.group(2)), "attrs": [],
                       "inputs": (0, 0, []), "outputs": (0, 0, []), "types": [],
                       "deprecated": m.group(3) is not None}
            # "ai.onnx.preview.training.Adagrad-1": the op name after the domain prefix.
            schemas.append(current)
        elif line.startswith("#### "):
            finish_block()
            title = line[5:].strip()
            section = None
            if title.startswith("Attributes"):
                section = ("attributes", title)
            elif title.startswith("Inputs"):
                section = ("inputs", title)
            elif title.startswith("Outputs"):
                section = ("outputs", title)
            elif title.startswith("Type Constraints"):
                section = ("types", title)
        elif line.startswith("<dt>"):
            block.append(line)
        elif line.startswith("</dl>"):
            finish_block()
            section = None
        i += 1
    finish_block()
    return schemas


def main():
    schemas = []
    for path in sys.argv[1:]:
        schemas += parse(path)
    schemas.sort(key=lambda s: (s["domain"], s["op"], s["since"]))
    print("// Generated by tools/gen_schema/gen_schema.py from the ONNX 1.23 operator changelogs")
    print("// (docs/Changelog.md, docs/Changelog-ml.md). Do not edit: regenerate.")
    print("// {domain, op, since_version,")
    print("//  {attribute: name, type, required, default as the spec writes it (\"\" when none)},")
    print("//  inputs min, max (-1: variadic), {formal inputs: name, optional, variadic, heterogeneous, type},")
    print("//  outputs min, max, {formal outputs}, {type constraints: name, allowed types}[, deprecated]}")
    for s in schemas:
        attrs = ", ".join(f"{{{cstr(n)}, AttrType::{t}, {'true' if r else 'false'}, {cstr(d or '')}}}"
                          for n, t, r, d in s["attrs"])
        def formals(fs):
            return ", ".join(f"{{{cstr(n)}, {b(o)}, {b(v)}, {b(h)}, {cstr(t)}}}" for n, o, v, h, t in fs)
        ilo, ihi, ins = s["inputs"]
        olo, ohi, outs = s["outputs"]
        types = ", ".join(f"{{{cstr(n)}, {{{', '.join(cstr(t) for t in ts)}}}}}" for n, ts in s["types"])
        print(f"{{{cstr(s['domain'])}, {cstr(s['op'])}, {s['since']},\n"
              f" {{{attrs}}},\n"
              f" {ilo}, {ihi}, {{{formals(ins)}}},\n"
              f" {olo}, {ohi}, {{{formals(outs)}}},\n"
              f" {{{types}}}{', true' if s['deprecated'] else ''}}},")


if __name__ == "__main__":
    main()
