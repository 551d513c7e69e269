"""Loading and saving for the generators that rewrite a model (nbits_model.py, dynamic_int8_model.py,
fp16_model.py): the checker runs on what they write when the source passes it itself (ONNX
Runtime-written models, with com.microsoft ops in the default domain, often do not), and `save`
copies the case inputs beside the source to the result (its expected outputs are ONNX Runtime's:
ort_expected.js)."""
import glob
import os
import shutil
import sys

import onnx


def load(src):
    """(model, whether it passes onnx.checker)."""
    model = onnx.load(src)
    try:
        onnx.checker.check_model(model)
        return model, True
    except onnx.checker.ValidationError as e:
        print(f"note: {src} itself fails onnx.checker ({str(e).splitlines()[0]}); not checking the output",
              file=sys.stderr)
        return model, False


def check_and_save(model, dst, source_valid):
    """Saves model at dst, checked first when its source passed the checker: a fault of the
    rewrite shows here."""
    if source_valid:
        onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    onnx.save(model, dst)


def save(model, src, dst, source_valid):
    check_and_save(model, dst, source_valid)
    src_dir, dst_dir = (os.path.dirname(os.path.abspath(p)) for p in (src, dst))
    if src_dir == dst_dir:
        return
    for case in sorted(glob.glob(os.path.join(src_dir, "test_data_set_*"))):
        out = os.path.join(dst_dir, os.path.basename(case))
        os.makedirs(out, exist_ok=True)
        for f in glob.glob(os.path.join(case, "input_*.pb")):
            shutil.copy(f, out)


def replace_nodes(graph, nodes, new_initializers, replaced):
    """graph's nodes become `nodes`; initializers named in `replaced` go unless a node still reads
    them (a tied embedding), and `new_initializers` join."""
    still_read = {x for n in nodes for x in n.input}
    kept = [t for t in graph.initializer if t.name not in replaced or t.name in still_read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + new_initializers)


def float_matrices(graph):
    """The graph's 2-D float initializers by name: the weights the rewrites quantize."""
    return {t.name: t for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) == 2}


def is_matmul_on(node, weights):
    """Whether node is a default-domain MatMul whose B is one of `weights`."""
    return node.op_type == "MatMul" and node.domain in ("", "ai.onnx") and node.input[1] in weights


def rewrite(src, dst, rewrite_node, extra_opsets=()):
    """Loads src, replaces each node for which rewrite_node(node, weights) returns
    (new nodes, new initializers, names of the initializers they replace) -- None keeps the node --
    and saves the result at dst with the case inputs. weights: float_matrices of the graph.
    extra_opsets: (domain, version) pairs the result imports at least.
    Returns how many initializers were replaced."""
    model, source_valid = load(src)
    g = model.graph
    weights = float_matrices(g)
    nodes, inits, replaced = [], [], set()
    for n in g.node:
        r = rewrite_node(n, weights)
        if r is None:
            nodes.append(n)
            continue
        nodes += r[0]
        inits += r[1]
        replaced.update(r[2])
    replace_nodes(g, nodes, inits, replaced)
    for domain, version in extra_opsets:
        imports = [o for o in model.opset_import if o.domain == domain or (domain == "" and o.domain == "ai.onnx")]
        if not imports:
            model.opset_import.append(onnx.helper.make_opsetid(domain, version))
        for o in imports:
            o.version = max(o.version, version)
    save(model, src, dst, source_valid)
    return len(replaced)
