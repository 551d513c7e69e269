#!/usr/bin/python3
"""Tree-ensemble models in the attribute forms sklearn-onnx and onnxmltools write, built directly
as seeded random trees grown on a random sample (no sklearn, XGBoost or LightGBM needed):

    /usr/bin/python3 tools/gen_models/tree_models.py OUT_DIR [SEED]

writes OUT_DIR/<case>/model.onnx and OUT_DIR/<case>/test_data_set_0/input_0.pb (X, float32 unless
named _f64) for these cases:
  * rf_b{1,1000}: sklearn-onnx's RandomForestClassifier: TreeEnsembleClassifier (ai.onnx.ml 1),
    100 trees grown to depth 10 on bootstrap samples, 24 features, 3 classes, BRANCH_LEQ on float
    thresholds (midpoints of two sample values, as sklearn splits), every leaf voting its class
    frequencies / 100 (sklearn-onnx averages the trees in class_weights); outputs label, probabilities.
    rf_zipmap_b1: the same with the ZipMap sklearn-onnx adds by default (a sequence of maps).
  * xgb_bin_b{1,1000}, xgb_multi_b{1,1000}: onnxmltools' XGBClassifier: TreeEnsembleClassifier
    (ai.onnx.ml 3), depth-6 trees with BRANCH_LT and per-node missing directions, 28 features;
    binary: 400 trees, class_ids all 0, base_values [logit(0.5)], LOGISTIC; multiclass: 4 classes
    x 100 rounds (tree i votes for class i % 4), base_values [0.5] * 4, SOFTMAX. 2% of X is NaN.
  * lgbm_b{1,10000}: onnxmltools' LGBMRegressor: TreeEnsembleRegressor (ai.onnx.ml 1), 500 trees
    of 31 leaves grown leaf-wise (the largest leaf splits next), BRANCH_LEQ with
    nodes_missing_value_tracks_true from each split's default side, 20 features, 3% NaN.
  * lgbm_f64_b1000: the same trees with nodes_values_as_tensor / target_weights_as_tensor
    (ai.onnx.ml 3, double thresholds that are not float32 values) and a double input.
  * te5_lgbm_b{1,10000}: the LightGBM trees as TreeEnsemble (ai.onnx.ml 5): nodes_* / leaf_*
    with float tensors and uint8 modes.
Deterministic: the same seed writes the same bytes, so nothing is committed. ONNX Runtime's
outputs: node tools/gen_models/ort_expected.js OUT_DIR/<case> (all but rf_zipmap_b1, whose
sequence-of-maps output onnxruntime-node cannot return; its input is rf_b1's). Float input with
double thresholds is not written: ONNX Runtime refuses it ("could not unpack tensor attribute
nodes_values_as_tensor"), it compares in the input's type.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Tree:
    """One tree as parallel lists: node i is a split (feature, threshold, true, false,
    missing_true) or a leaf (payload). Node 0 is the root; ids are positions."""

    def __init__(self):
        self.feature, self.threshold, self.true, self.false, self.missing = [], [], [], [], []
        self.leaf = []  # None for a split, else the payload

    def add(self):
        for lst in (self.feature, self.threshold, self.true, self.false, self.missing):
            lst.append(0)
        self.leaf.append(None)
        return len(self.leaf) - 1


def split_point(rng, values):
    """A threshold between two neighbouring sample values near a random quantile (or None)."""
    v = np.unique(values)
    if len(v) < 2:
        return None
    i = int(rng.integers(max(1, len(v) // 4), max(2, 3 * len(v) // 4 + 1)))
    i = min(max(i, 1), len(v) - 1)
    return (float(v[i - 1]) + float(v[i])) / 2  # in double, as sklearn's splitter


def grow_depth_first(rng, X, rows, max_depth, leaf_value, min_rows=2, strict_lt=False):
    """Recursive splits to max_depth (fewer when a node's sample is small or constant)."""
    t = Tree()

    def build(node_rows, depth):
        me = t.add()
        thr = None
        if depth < max_depth and len(node_rows) >= min_rows:
            for _ in range(4):
                f = int(rng.integers(X.shape[1]))
                vals = X[node_rows, f]
                vals = vals[~np.isnan(vals)]
                thr = split_point(rng, vals)
                if thr is not None:
                    break
        if thr is None:
            t.leaf[me] = leaf_value(node_rows)
            return me
        x = X[node_rows, f]
        go = x < thr if strict_lt else x <= thr
        missing_true = bool(rng.integers(2))
        go = np.where(np.isnan(x), missing_true, go)
        t.feature[me], t.threshold[me], t.missing[me] = f, thr, int(missing_true)
        t.true[me] = build(node_rows[go], depth + 1)
        t.false[me] = build(node_rows[~go], depth + 1)
        return me

    build(rows, 0)
    return t


def grow_leaf_wise(rng, X, rows, n_leaves, leaf_value):
    """LightGBM's growth: split the leaf with the most rows until the tree has n_leaves."""
    t = Tree()
    leaves = {t.add(): rows}
    while len(leaves) < n_leaves:
        me = max(leaves, key=lambda k: len(leaves[k]))
        node_rows = leaves[me]
        if len(node_rows) < 2:
            break
        thr = None
        for _ in range(8):
            f = int(rng.integers(X.shape[1]))
            x = X[node_rows, f]
            thr = split_point(rng, x[~np.isnan(x)])
            if thr is not None:
                break
        if thr is None:
            break
        del leaves[me]
        missing_true = bool(rng.integers(2))  # LightGBM's default_left
        go = np.where(np.isnan(x), missing_true, x <= thr)
        t.feature[me], t.threshold[me], t.missing[me] = f, thr, int(missing_true)
        a, b = t.add(), t.add()
        t.true[me], t.false[me] = a, b
        leaves[a], leaves[b] = node_rows[go], node_rows[~go]
    for k, r in leaves.items():
        t.leaf[k] = leaf_value(r)
    return t


def sample(rng, n, f, nan_rate=0.0):
    X = rng.standard_normal((n, f)).astype(np.float32)
    X[:, ::3] = np.round(X[:, ::3] * 4) / 4  # some coarse features: ties at the thresholds' neighbours
    if nan_rate:
        X[rng.random(X.shape) < nan_rate] = np.nan
    return X


def legacy_node_attrs(trees, branch_mode, values_as_tensor):
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                         "nodes_hitrates")}
    values = []
    for ti, t in enumerate(trees):
        for i in range(len(t.leaf)):
            leaf = t.leaf[i] is not None
            a["nodes_treeids"].append(ti)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else t.feature[i])
            a["nodes_modes"].append("LEAF" if leaf else branch_mode)
            a["nodes_truenodeids"].append(0 if leaf else t.true[i])
            a["nodes_falsenodeids"].append(0 if leaf else t.false[i])
            a["nodes_missing_value_tracks_true"].append(0 if leaf else t.missing[i])
            a["nodes_hitrates"].append(1.0)
            values.append(0.0 if leaf else t.threshold[i])
    if values_as_tensor:
        a["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(values, np.float64))
    else:
        a["nodes_values"] = np.array(values, np.float32).tolist()
    return a


def votes(trees, prefix, as_tensor):
    """class_* / target_* lists: each leaf payload is a list of (id, weight)."""
    a = {prefix + k: [] for k in ("treeids", "nodeids", "ids")}
    w = []
    for ti, t in enumerate(trees):
        for i, payload in enumerate(t.leaf):
            for cid, weight in payload or []:
                a[prefix + "treeids"].append(ti)
                a[prefix + "nodeids"].append(i)
                a[prefix + "ids"].append(cid)
                w.append(weight)
    if as_tensor:
        a[prefix + "weights_as_tensor"] = numpy_helper.from_array(np.array(w, np.float64))
    else:
        a[prefix + "weights"] = np.array(w, np.float32).tolist()
    return a


def model(nodes, inputs, outputs, ml_opset):
    g = helper.make_graph(nodes, "trees", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", ml_opset)],
                          producer_name="tree_models.py")
    m.ir_version = 8
    return m


def x_input(f, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info("X", dtype, ["N", f])


def classifier(trees, n_classes, mode, post, base, ml_opset, zipmap=False):
    attrs = legacy_node_attrs(trees, mode, False)
    attrs.update(votes(trees, "class_", False))
    attrs.update(classlabels_int64s=list(range(n_classes)), post_transform=post)
    if base is not None:
        attrs["base_values"] = base
    prob = "probability_tensor" if zipmap else "probabilities"
    nodes = [helper.make_node("TreeEnsembleClassifier", ["X"], ["label", prob], domain="ai.onnx.ml", **attrs)]
    outputs = [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"])]
    if zipmap:
        nodes.append(helper.make_node("ZipMap", [prob], ["output_probability"], domain="ai.onnx.ml",
                                      classlabels_int64s=list(range(n_classes))))
        seq = onnx.TypeProto()  # seq(map(int64, float)); onnx 1.12's helper has no map type maker
        seq.sequence_type.elem_type.map_type.key_type = TensorProto.INT64
        seq.sequence_type.elem_type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
        outputs.append(helper.make_value_info("output_probability", seq))
    else:
        outputs.append(helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", n_classes]))
    return nodes, outputs


def regressor(trees, as_tensor):
    attrs = legacy_node_attrs(trees, "BRANCH_LEQ", as_tensor)
    attrs.update(votes(trees, "target_", as_tensor))
    attrs.update(n_targets=1, aggregate_function="SUM", post_transform="NONE")
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain="ai.onnx.ml", **attrs)
    return [node], [helper.make_tensor_value_info("variable", TensorProto.FLOAT, ["N", 1])]


def tree_ensemble5(trees):
    """TreeEnsemble-5: interior nodes numbered over all trees, leaves likewise, one target."""
    feat, split, modes, tid, tleaf, fid, fleaf, miss, roots, leaf_t, leaf_w = ([] for _ in range(11))
    for t in trees:
        node_no, leaf_no = {}, {}
        for i, payload in enumerate(t.leaf):
            if payload is None:
                node_no[i] = len(feat) + len(node_no)
            else:
                leaf_no[i] = len(leaf_w) + len(leaf_no)
        roots.append(node_no[0])
        for i, payload in enumerate(t.leaf):
            if payload is not None:
                continue
            feat.append(t.feature[i])
            split.append(t.threshold[i])
            modes.append(0)  # BRANCH_LEQ
            miss.append(t.missing[i])
            for child, ids, leafs in ((t.true[i], tid, tleaf), (t.false[i], fid, fleaf)):
                is_leaf = t.leaf[child] is not None
                ids.append(leaf_no[child] if is_leaf else node_no[child])
                leafs.append(int(is_leaf))
        for i, payload in enumerate(t.leaf):
            if payload is not None:
                leaf_t.append(payload[0][0])
                leaf_w.append(payload[0][1])
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml",
        nodes_featureids=feat, nodes_splits=numpy_helper.from_array(np.array(split, np.float32)),
        nodes_modes=numpy_helper.from_array(np.array(modes, np.uint8)),
        nodes_truenodeids=tid, nodes_trueleafs=tleaf, nodes_falsenodeids=fid, nodes_falseleafs=fleaf,
        nodes_missing_value_tracks_true=miss, leaf_targetids=leaf_t,
        leaf_weights=numpy_helper.from_array(np.array(leaf_w, np.float32)),
        tree_roots=roots, n_targets=1, aggregate_function=1, post_transform=0)
    return [node], [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 1])]


def write_case(out, name, nodes, outputs, f, ml_opset, x, input_type=TensorProto.FLOAT):
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(model(nodes, [x_input(f, input_type)], outputs, ml_opset), os.path.join(out, name, "model.onnx"))
    with open(os.path.join(d, "input_0.pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(x, "X").SerializeToString())
    print(name, x.shape, x.dtype)


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    rng = np.random.default_rng(seed)

    # Random forest: bootstrap samples, leaves vote class frequencies / n_trees.
    F, C, T = 24, 3, 100
    X = sample(rng, 3000, F)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 0.8)

    def rf_leaf(rows):
        counts = np.bincount(y[rows], minlength=C).astype(np.float64)
        return [(c, counts[c] / counts.sum() / T) for c in range(C)]

    trees = [grow_depth_first(rng, X, rng.integers(0, len(X), len(X)), 10, rf_leaf) for _ in range(T)]
    nodes, outputs = classifier(trees, C, "BRANCH_LEQ", "NONE", None, 1)
    xs = {n: sample(rng, n, F) for n in (1, 1000)}
    for n in (1, 1000):
        write_case(out, f"rf_b{n}", nodes, outputs, F, 1, xs[n])
    nodes, outputs = classifier(trees, C, "BRANCH_LEQ", "NONE", None, 1, zipmap=True)
    write_case(out, "rf_zipmap_b1", nodes, outputs, F, 1, xs[1])  # rf_b1's input: the same probabilities

    # XGBoost: depth-6 trees with BRANCH_LT, one class per tree.
    F = 28
    X = sample(rng, 4000, F, nan_rate=0.02)
    leaf = lambda cls: (lambda rows: [(cls, float(np.float32(rng.normal(0, 0.1))))])
    trees = [grow_depth_first(rng, X, rng.choice(len(X), 2000, replace=False), 6, leaf(0), strict_lt=True) for _ in range(400)]
    nodes, outputs = classifier(trees, 2, "BRANCH_LT", "LOGISTIC", [0.0], 3)
    for n in (1, 1000):
        write_case(out, f"xgb_bin_b{n}", nodes, outputs, F, 3, sample(rng, n, F, 0.02))
    trees = [grow_depth_first(rng, X, rng.choice(len(X), 2000, replace=False), 6, leaf(i % 4), strict_lt=True) for i in range(400)]
    nodes, outputs = classifier(trees, 4, "BRANCH_LT", "SOFTMAX", [0.5] * 4, 3)
    for n in (1, 1000):
        write_case(out, f"xgb_multi_b{n}", nodes, outputs, F, 3, sample(rng, n, F, 0.02))

    # LightGBM: 500 leaf-wise trees of 31 leaves, missing values follow each split's default side.
    F = 20
    X = sample(rng, 5000, F, nan_rate=0.03)
    leaf = lambda rows: [(0, float(np.float32(rng.normal(0, 0.05))))]
    trees = [grow_leaf_wise(rng, X, rng.choice(len(X), 3000, replace=False), 31, leaf) for _ in range(500)]
    nodes, outputs = regressor(trees, False)
    for n in (1, 10000):
        write_case(out, f"lgbm_b{n}", nodes, outputs, F, 1, sample(rng, n, F, 0.03))
    nodes, outputs = regressor(trees, True)
    x = sample(rng, 1000, F, 0.03)
    write_case(out, "lgbm_f64_b1000", nodes, outputs, F, 3, x.astype(np.float64) + rng.normal(0, 1e-9, x.shape), TensorProto.DOUBLE)
    nodes, outputs = tree_ensemble5(trees)
    for n in (1, 10000):
        write_case(out, f"te5_lgbm_b{n}", nodes, outputs, F, 5, sample(rng, n, F, 0.03))


if __name__ == "__main__":
    main()
