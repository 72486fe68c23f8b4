#!/usr/bin/python3
"""Writes NIR files (HDF5, as the nir package writes them) that exercise what real exports may
hold and the three shipped ones do not: biases everywhere, every parameter different per neuron,
v_reset given, LI, CubaLI and I layers that give values, Threshold, Scale, Delay, Conv1d with groups,
AvgPool2d, a recurrent subgraph whose edges name its nodes as snnTorch does, and two inputs.

    make_nir_files.py DIR     (seeded: the same files every time)
Prints each file's name and the step (ms) to run it at.
    make_nir_files.py --bad DIR
Writes files snn must refuse, and bad_files.txt: each one's name and the words its error holds.
"""
import os
import sys

import h5py
import numpy as np

rng = np.random.default_rng(20261127)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def write(path, nodes, edges, ascii_bytes=False):
    """Strings as the nir package writes them (h5py, variable-length UTF-8), or with
    `ascii_bytes` as bytes objects (variable-length ASCII), which other writers produce."""
    text = (lambda v: v.encode()) if ascii_bytes else (lambda v: v)
    with h5py.File(path, "w") as f:
        f["version"] = text("0.2.0")
        root = f.create_group("node")
        root["type"] = text("NIRGraph")
        _write_graph(root, nodes, edges, text)


def _write_graph(group, nodes, edges, text):
    g = group.create_group("nodes")
    for name, node in nodes.items():
        n = g.create_group(name)
        if node.get("type") == "NIRGraph":
            n["type"] = text("NIRGraph")
            _write_graph(n, node["nodes"], node["edges"], text)
            continue
        for key, value in node.items():
            if key == "type":
                n["type"] = text(value)
            else:
                n[key] = value
    kind = h5py.string_dtype("ascii" if text("x") == b"x" else "utf-8")
    group.create_dataset("edges", data=np.array([[text(s), text(d)] for s, d in edges],
                                                dtype=object), dtype=kind)


def lif(size, dt, reset=False):
    tau = rng.uniform(2 * dt, 20 * dt, size)
    node = {"type": "LIF", "tau": tau, "r": rng.uniform(0.5, 2.0, size) * tau / dt,
            "v_leak": rng.uniform(-0.05, 0.05, size), "v_threshold": rng.uniform(0.5, 1.5, size)}
    if reset:
        node["v_reset"] = rng.uniform(-0.2, 0.1, size)
    return node


def cuba(size, dt):
    tau_mem = rng.uniform(2 * dt, 20 * dt, size)
    tau_syn = rng.uniform(1 * dt, 5 * dt, size)
    return {"type": "CubaLIF", "tau_mem": tau_mem, "tau_syn": tau_syn,
            "r": tau_mem / dt * rng.uniform(0.8, 1.2, size), "w_in": tau_syn / dt,
            "v_leak": np.zeros(size), "v_threshold": rng.uniform(0.8, 1.2, size)}


def affine(out, inp, scale=1.0, bias=0.3):
    return {"type": "Affine", "weight": f32(rng.normal(0, scale, (out, inp))),
            "bias": f32(rng.normal(0, bias, out))}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    made = []
    dt = 1e-3

    # Biases and every parameter per neuron, LIF with v_reset into CubaLIF.
    nodes = {"input": {"type": "Input", "shape": np.array([8])},
             "fc1": affine(16, 8, 1.2, 0.2), "lif1": lif(16, dt, reset=True),
             "fc2": affine(6, 16, 0.8, 0.1), "cuba": cuba(6, dt),
             "output": {"type": "Output", "shape": np.array([6])}}
    edges = [("input", "fc1"), ("fc1", "lif1"), ("lif1", "fc2"), ("fc2", "cuba"),
             ("cuba", "output")]
    write(os.path.join(out_dir, "gen_bias_hetero.nir"), nodes, edges)
    made.append(("gen_bias_hetero.nir", 1))

    # A leaky-integrator read-out: the output gives values, not spikes.
    li_tau = rng.uniform(2 * dt, 10 * dt, 3)
    nodes = {"input": {"type": "Input", "shape": np.array([6])},
             "lin": {"type": "Linear", "weight": f32(rng.normal(0, 1.5, (10, 6)))},
             "lif": lif(10, dt), "fc": affine(3, 10, 1.0, 0.5),
             "li": {"type": "LI", "tau": li_tau, "r": li_tau / dt, "v_leak": np.full(3, 0.1)},
             "output": {"type": "Output", "shape": np.array([3])}}
    edges = [("input", "lin"), ("lin", "lif"), ("lif", "fc"), ("fc", "li"), ("li", "output")]
    write(os.path.join(out_dir, "gen_li_readout.nir"), nodes, edges)
    made.append(("gen_li_readout.nir", 1))

    # A recurrent subgraph named as snnTorch's RLeaky export names it (edges say 'lif', the
    # node is 'lif'; the subgraph is 'rec'), a Delay of 3 steps and a Scale on the way out,
    # and an integrator and a threshold layer.
    rec_tau = rng.uniform(3 * dt, 12 * dt, 12)
    rec = {"type": "NIRGraph",
           "nodes": {"input": {"type": "Input", "shape": np.array([12])},
                     "lif": {"type": "LIF", "tau": rec_tau, "r": rec_tau / dt,
                             "v_leak": np.zeros(12), "v_threshold": rng.uniform(0.6, 1.0, 12)},
                     "w_rec": affine(12, 12, 0.4, 0.05),
                     "output": {"type": "Output", "shape": np.array([12])}},
           "edges": [("input", "lif"), ("lif", "w_rec"), ("w_rec", "lif"), ("lif", "output")]}
    nodes = {"input": {"type": "Input", "shape": np.array([5])},
             "fc_in": affine(12, 5, 1.5, 0.1), "rec": rec,
             "delay": {"type": "Delay", "delay": np.full(12, 3 * dt)},
             "scale": {"type": "Scale", "scale": f32(rng.uniform(0.5, 1.5, 12))},
             "integ": {"type": "I", "r": rng.uniform(0.05, 0.2, 12)},
             "fc_out": affine(4, 12, 0.7, 0.0),
             "thr": {"type": "Threshold", "threshold": rng.uniform(0.1, 0.4, 4)},
             "fc_last": {"type": "Linear", "weight": f32(rng.normal(0.5, 0.5, (4, 4)))},
             "last": lif(4, dt),
             "output": {"type": "Output", "shape": np.array([4])}}
    edges = [("input", "fc_in"), ("fc_in", "rec"), ("rec", "delay"), ("delay", "scale"),
             ("scale", "integ"), ("integ", "fc_out"), ("fc_out", "thr"), ("thr", "fc_last"),
             ("fc_last", "last"), ("last", "output")]
    write(os.path.join(out_dir, "gen_recurrent_delay.nir"), nodes, edges, ascii_bytes=True)
    made.append(("gen_recurrent_delay.nir", 1))

    # Convolutions: Conv2d with a bias and padding into IF with per-neuron thresholds, AvgPool2d,
    # Flatten, and a second input through a grouped Conv1d; both reach one LIF layer.
    if_thr = rng.uniform(0.5, 1.5, (4, 6, 6))
    nodes = {"image": {"type": "Input", "shape": np.array([2, 6, 6])},
             "conv": {"type": "Conv2d", "weight": f32(rng.normal(0, 0.6, (4, 2, 3, 3))),
                      "bias": f32(rng.normal(0.05, 0.05, 4)), "stride": np.array([1, 1]),
                      "padding": np.array([1, 1]), "dilation": np.array([1, 1]),
                      "groups": 1, "input_shape": np.array([6, 6])},
             "if": {"type": "IF", "r": f32(rng.uniform(0.8, 1.2, (4, 6, 6))),
                    "v_threshold": f32(if_thr)},
             "pool": {"type": "AvgPool2d", "kernel_size": np.array([2, 2]),
                      "stride": np.array([2, 2]), "padding": np.array([0, 0])},
             "flat": {"type": "Flatten", "start_dim": 0, "end_dim": -1},
             "fc": affine(5, 36, 1.0, 0.1),
             "signal": {"type": "Input", "shape": np.array([4, 10])},
             "conv1": {"type": "Conv1d", "weight": f32(rng.normal(0, 0.8, (4, 2, 3))),
                       "bias": f32(rng.normal(0, 0.1, 4)), "stride": np.array([2]),
                       "padding": np.array([1]), "dilation": np.array([2]), "groups": 2,
                       "input_shape": np.array([10])},
             "flat1": {"type": "Flatten", "start_dim": 0, "end_dim": -1},
             "fc1": {"type": "Linear", "weight": f32(rng.normal(0, 0.5, (5, 16)))},
             "out": lif(5, dt),
             "output": {"type": "Output", "shape": np.array([5])}}
    edges = [("image", "conv"), ("conv", "if"), ("if", "pool"), ("pool", "flat"),
             ("flat", "fc"), ("fc", "out"), ("signal", "conv1"), ("conv1", "flat1"),
             ("flat1", "fc1"), ("fc1", "out"), ("out", "output")]
    write(os.path.join(out_dir, "gen_conv_two_inputs.nir"), nodes, edges)
    made.append(("gen_conv_two_inputs.nir", 1))

    # A current-based leaky integrator read-out (NIR 1.0's CubaLI, as Norse exports LICell).
    cli_tau_mem = rng.uniform(3 * dt, 10 * dt, 3)
    cli_tau_syn = rng.uniform(2 * dt, 5 * dt, 3)
    nodes = {"input": {"type": "Input", "shape": np.array([6])},
             "fc": affine(8, 6, 1.5, 0.2), "cuba": cuba(8, dt),
             "lin": {"type": "Linear", "weight": f32(rng.normal(0, 1.0, (3, 8)))},
             "readout": {"type": "CubaLI", "tau_mem": cli_tau_mem, "tau_syn": cli_tau_syn,
                         "r": cli_tau_mem / dt, "w_in": cli_tau_syn / dt,
                         "v_leak": rng.uniform(-0.1, 0.1, 3)},
             "output": {"type": "Output", "shape": np.array([3])}}
    edges = [("input", "fc"), ("fc", "cuba"), ("cuba", "lin"), ("lin", "readout"),
             ("readout", "output")]
    write(os.path.join(out_dir, "gen_cubali_readout.nir"), nodes, edges)
    made.append(("gen_cubali_readout.nir", 1))

    for name, step in made:
        print(name, step)
    return 0


def make_bad(out_dir):
    """Files snn must refuse, each with the words its one line must hold (bad_files.txt)."""
    os.makedirs(out_dir, exist_ok=True)
    dt = 1e-3
    cases = []
    nodes = {"input": {"type": "Input", "shape": np.array([8])}, "fc": affine(5, 8),
             "lif": lif(6, dt), "output": {"type": "Output", "shape": np.array([6])}}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "output")]
    write(os.path.join(out_dir, "bad_shapes.nir"), nodes, edges)
    cases.append(("bad_shapes.nir", "edge fc -> lif (from layer 'input'): 5 (5 values) reaches 'lif' of 6 (6)"))
    nodes = {"input": {"type": "Input", "shape": np.array([4])},
             "delay": {"type": "Delay", "delay": np.full(4, 1.5 * dt)}, "lif": lif(4, dt),
             "output": {"type": "Output", "shape": np.array([4])}}
    edges = [("input", "delay"), ("delay", "lif"), ("lif", "output")]
    write(os.path.join(out_dir, "bad_delay.nir"), nodes, edges)
    cases.append(("bad_delay.nir", "a delay of 0.0015 s is not a whole number of 1 ms steps"))
    bad_lif = lif(3, dt)
    bad_lif["v_threshold"] = np.ones(4)
    nodes = {"input": {"type": "Input", "shape": np.array([3])},
             "lin": {"type": "Linear", "weight": f32(np.eye(3))}, "lif": bad_lif,
             "output": {"type": "Output", "shape": np.array([3])}}
    edges = [("input", "lin"), ("lin", "lif"), ("lif", "output")]
    write(os.path.join(out_dir, "bad_counts.nir"), nodes, edges)
    cases.append(("bad_counts.nir", "'v_threshold' has 4 values for a layer of 3"))
    # A recurrent subgraph written flattened: its nodes are the graph's own, their names with
    # dots, while the graph's edges still name the subgraph.
    nodes = {"input": {"type": "Input", "shape": np.array([4])}, "lif1.lif": lif(4, dt),
             "lif1.w_rec": {"type": "Linear", "weight": f32(np.eye(4))},
             "output": {"type": "Output", "shape": np.array([4])}}
    edges = [("input", "lif1"), ("lif1", "output"), ("lif1.lif", "lif1.w_rec"),
             ("lif1.w_rec", "lif1.lif")]
    write(os.path.join(out_dir, "bad_flattened.nir"), nodes, edges)
    cases.append(("bad_flattened.nir", "the graph has lif1.lif, lif1.w_rec, a subgraph 'lif1' "
                  "written flattened"))
    # A subgraph whose Input declares 12 values where 38 arrive (NIR's type check refuses it).
    sub = {"type": "NIRGraph",
           "nodes": {"input": {"type": "Input", "shape": np.array([12])}, "lif": lif(12, dt),
                     "output": {"type": "Output", "shape": np.array([12])}},
           "edges": [("input", "lif"), ("lif", "output")]}
    nodes = {"input": {"type": "Input", "shape": np.array([38])}, "sub": sub,
             "output": {"type": "Output", "shape": np.array([12])}}
    write(os.path.join(out_dir, "bad_port.nir"), nodes, [("input", "sub"), ("sub", "output")])
    cases.append(("bad_port.nir", "node 'sub.input' (Input) declares 12 (12 values), but 38 (38 "
                  "values) reaches it"))
    with open(os.path.join(out_dir, "bad_files.txt"), "w") as f:
        for name, words in cases:
            f.write("%s\t%s\n" % (name, words))


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--bad":
    make_bad(sys.argv[2])
    sys.exit(0)


if __name__ == "__main__":
    sys.exit(main())
