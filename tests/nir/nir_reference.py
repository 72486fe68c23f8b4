#!/usr/bin/python3
"""A reference executor for NIR files, written from docs/nir.md and the NIR specification, and
from nothing in snn's C++: it reads the HDF5 file with h5py and steps the graph node by node
with numpy, in float64, weights rounded to float32 as snn keeps them.

    nir_reference.py MODEL.nir --inputs IN.csv --steps N --out OUT.csv [--dt MS]
                     [--reset subtract|zero]

--reset: how a spiking node that gives no v_reset resets (subtract the threshold, the default;
or set v to 0, as the nir library reads such nodes).

IN.csv: lines "step,layer,neuron" (a spike of an input layer's neuron at a step).
OUT.csv: lines "step,layer,neuron,value": each spike of an output layer (value 1), and each
non-zero value of an output that gives values, every step. An output layer is the layer a
top-level Output takes straight (named as that layer), or the Output itself.
"""
import argparse
import sys

import h5py
import numpy as np

NEURONS = {"LIF", "CubaLIF", "CubaLI", "IF", "LI", "I", "Integrator", "Threshold"}


def read_node(group):
    node = {"params": {}}
    for key in group:
        item = group[key]
        if isinstance(item, h5py.Group):
            for sub in item:
                if isinstance(item[sub], h5py.Dataset):
                    value = item[sub][()]
                    if not isinstance(value, bytes):
                        node["params"][key + "/" + sub] = np.asarray(value)
            continue
        value = item[()]
        if key == "type":
            node["type"] = value.decode() if isinstance(value, bytes) else str(value)
        elif isinstance(value, bytes):
            node["params"][key] = value.decode()
        else:
            node["params"][key] = np.asarray(value)
    return node


def read_graph(path):
    nodes, edges, ports = {}, [], {}

    def read(group, prefix, top):
        inputs, outputs = [], []
        for name in group["nodes"]:
            g = group["nodes"][name]
            full = prefix + name
            if "nodes" in g:
                ports[full] = read(g, full + ".", False)
                continue
            node = read_node(g)
            node["top"] = top
            nodes[full] = node
            if node["type"] == "Input":
                inputs.append(full)
            if node["type"] == "Output":
                outputs.append(full)
        if "edges" in group:
            for src, dst in group["edges"][()]:
                edges.append((prefix + src.decode(), prefix + dst.decode()))
        return inputs, outputs

    with h5py.File(path, "r") as f:
        read(f["node"], "", True)

    def resolve(end, as_target):
        if end in nodes:
            return end
        inputs, outputs = ports[end]
        return (inputs if as_target else outputs)[0]

    edges = [(resolve(s, False), resolve(d, True)) for s, d in edges]
    return nodes, sorted(edges)


def order_and_back_edges(nodes, edges):
    """Depth-first from the top-level Inputs (names in order), then from any node not reached;
    children in name order. An edge to a node still on the path closes a loop."""
    children = {}
    for s, d in edges:
        children.setdefault(s, []).append(d)
    state, finished, back = {}, [], set()

    def visit(root):
        if state.get(root):
            return
        state[root] = 1
        stack = [(root, iter(children.get(root, [])))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                finished.append(node)
                stack.pop()
            elif state.get(nxt) == 1:
                back.add((node, nxt))
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(children.get(nxt, []))))

    for name in sorted(nodes):
        if nodes[name]["type"] == "Input" and nodes[name]["top"]:
            visit(name)
    for name in sorted(nodes):
        visit(name)
    return finished[::-1], back


def param(node, key, size, default=None):
    p = node["params"].get(key)
    if p is None:
        if default is None:
            raise ValueError("node has no " + key)
        return np.full(size, float(default))
    flat = np.asarray(p, dtype=np.float64).reshape(-1)
    return np.full(size, flat[0]) if flat.size == 1 else flat


def spatial(node, key, rank, fallback):
    p = node["params"].get(key)
    if p is None:
        return [fallback] * rank
    flat = np.asarray(p).reshape(-1)
    return [int(flat[0])] * rank if flat.size == 1 else [int(v) for v in flat[:rank]]


def conv(x, node, rank):
    w = np.asarray(node["params"]["weight"], dtype=np.float32).astype(np.float64)
    groups = int(np.asarray(node["params"].get("groups", 1)).reshape(-1)[0])
    if x.ndim != rank + 1:
        shape = [int(v) for v in np.asarray(node["params"]["input_shape"]).reshape(-1)[:rank]]
        x = x.reshape([w.shape[1] * groups] + shape)
    if rank == 1:
        x = x[:, None, :]
        w = w[:, :, None, :]
    stride = spatial(node, "stride", rank, 1)
    pad = spatial(node, "padding", rank, 0)
    dil = spatial(node, "dilation", rank, 1)
    if rank == 1:
        stride, pad, dil = [1] + stride, [0] + pad, [1] + dil
    xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    out_c, per_group_in, kh, kw = w.shape
    oh = (xp.shape[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[2] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((out_c, oh, ow))
    per_group_out = out_c // groups
    for o in range(out_c):
        g = o // per_group_out
        for ic in range(per_group_in):
            c = g * per_group_in + ic
            for ky in range(kh):
                for kx in range(kw):
                    ys = ky * dil[0]
                    xs = kx * dil[1]
                    window = xp[c, ys:ys + stride[0] * (oh - 1) + 1:stride[0],
                                xs:xs + stride[1] * (ow - 1) + 1:stride[1]]
                    out[o] += w[o, ic, ky, kx] * window
    bias = node["params"].get("bias")
    if bias is not None:
        out += np.asarray(bias, dtype=np.float64).reshape(-1)[:, None, None] * np.ones_like(out)
    return out[:, 0, :] if rank == 1 else out


def pool(x, node, average):
    if x.ndim != 3:
        raise ValueError("pooling needs C,H,W")
    k = spatial(node, "kernel_size", 2, 1)
    stride = spatial(node, "stride", 2, 0) if "stride" in node["params"] else k
    pad = spatial(node, "padding", 2, 0)
    xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (xp.shape[1] - k[0]) // stride[0] + 1
    ow = (xp.shape[2] - k[1]) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow))
    for ky in range(k[0]):
        for kx in range(k[1]):
            out += xp[:, ky:ky + stride[0] * (oh - 1) + 1:stride[0],
                      kx:kx + stride[1] * (ow - 1) + 1:stride[1]]
    return out / (k[0] * k[1]) if average else out


def operator(node, x):
    t = node["type"]
    p = node["params"]
    if t in ("Affine", "Linear"):
        w = np.asarray(p["weight"], dtype=np.float32).astype(np.float64)
        y = w @ x.reshape(-1)
        if t == "Affine" and "bias" in p:
            y = y + np.asarray(p["bias"], dtype=np.float64).reshape(-1)
        return y
    if t == "Scale":
        s = np.asarray(p["scale"], dtype=np.float32).astype(np.float64).reshape(-1)
        return x * (s[0] if s.size == 1 else s.reshape(x.shape))
    if t == "Flatten":
        return x.reshape(-1)
    if t in ("Conv1d", "Conv2d"):
        return conv(x, node, 1 if t == "Conv1d" else 2)
    if t in ("SumPool2d", "SumPooling", "AvgPool2d"):
        return pool(x, node, t == "AvgPool2d")
    if t in ("Input", "Output"):
        return x
    raise ValueError("no operator " + t)


class Neuron:
    """One layer's state and its equation, forward Euler at step dt (docs/nir.md)."""

    def __init__(self, node, dt, reset_zero=False):
        self.type = node["type"]
        size, self.shape = None, None
        for key in ("tau", "tau_mem", "r", "v_threshold", "threshold"):
            if key in node["params"]:
                self.shape = np.asarray(node["params"][key]).shape or (1,)
                size = np.asarray(node["params"][key]).size
                break
        self.size = size
        if self.type in ("LIF", "LI"):
            self.a_mem = dt / param(node, "tau", size)
        if self.type in ("CubaLIF", "CubaLI"):
            self.a_mem = dt / param(node, "tau_mem", size)
            self.a_syn = dt / param(node, "tau_syn", size)
            self.w_in = param(node, "w_in", size, 1)
        self.r = param(node, "r", size, 1)
        self.v_leak = param(node, "v_leak", size, 0)
        key = "threshold" if self.type == "Threshold" else "v_threshold"
        self.thr = param(node, key, size, 0)
        self.subtract = "v_reset" not in node["params"] and not reset_zero
        self.v_reset = param(node, "v_reset", size, 0)
        self.v = np.zeros(size)
        self.i = np.zeros(size)
        self.graded = self.type in ("LI", "CubaLI", "I", "Integrator")

    def step(self, x):
        x = x.reshape(-1)
        t = self.type
        if t in ("LIF", "LI"):
            self.v = self.v + self.a_mem * (self.v_leak - self.v + self.r * x)
        elif t in ("CubaLIF", "CubaLI"):
            current = self.i
            self.i = current + self.a_syn * (self.w_in * x - current)
            self.v = self.v + self.a_mem * (self.v_leak - self.v + self.r * current)
        elif t in ("IF", "I", "Integrator"):
            self.v = self.v + self.r * x
        elif t == "Threshold":
            return (x > self.thr).astype(np.float64).reshape(self.shape)
        if self.graded:
            return self.v.copy().reshape(self.shape)
        z = self.v > self.thr
        self.v = np.where(z, self.v - self.thr if self.subtract else self.v_reset, self.v)
        return z.astype(np.float64).reshape(self.shape)


def add(a, b):
    """Two signals into one node: element by element (a zero at rest broadcasts)."""
    if a.shape == b.shape:
        return a + b
    if b.size == 1 or a.size == 1:
        return a + b
    return a.reshape(-1) + b.reshape(-1)


def run(path, inputs, steps, dt_ms, reset_zero=False):
    nodes, edges = read_graph(path)
    order, back = order_and_back_edges(nodes, edges)
    into = {}
    for s, d in edges:
        into.setdefault(d, []).append(s)
    dt = dt_ms / 1000.0
    neurons = {n: Neuron(nodes[n], dt, reset_zero) for n in order if nodes[n]["type"] in NEURONS}
    shapes = {}
    for n in order:
        if nodes[n]["type"] == "Input" and nodes[n]["top"]:
            p = nodes[n]["params"]
            shape = p.get("shape", p.get("input_type/input"))
            shapes[n] = tuple(int(v) for v in np.asarray(shape).reshape(-1))
    delay_steps = {}
    for n in order:
        if nodes[n]["type"] == "Delay":
            d = float(np.asarray(nodes[n]["params"]["delay"]).reshape(-1)[0])
            delay_steps[n] = int(round(d / dt))

    def evaluate(neuron_out, prev, delayed):
        """One pass over the graph in order: neurons give `neuron_out(name, x)`."""
        out = {}
        for n in order:
            node = nodes[n]
            total = None
            for s in into.get(n, []):
                value = prev[s] if (s, n) in back else out[s]
                total = value if total is None else add(total, value)
            t = node["type"]
            if t == "Input" and node["top"]:
                out[n] = neuron_out(n, None)
            elif t in NEURONS:
                out[n] = neuron_out(n, total)
            elif t == "Delay":
                out[n] = delayed(n, total)
            else:
                out[n] = operator(node, total)
        return out

    # At rest, before step 0: every neuron gives 0; what the operators make of that (biases)
    # fills the loops and the delay lines.
    def rest_neuron(n, x):
        if n in neurons:
            return np.zeros(neurons[n].shape)
        return np.zeros(shapes[n])

    rest = {n: np.zeros(1) for n in order}
    for _ in range(len(order) + 1):
        rest = evaluate(rest_neuron, rest, lambda n, x: x)
    lines = {}
    for n in delay_steps:
        total = None
        for s in into[n]:
            total = rest[s] if total is None else add(total, rest[s])
        lines[n] = [total] * delay_steps[n]

    outputs = []  # (name as snn names the layer, node feeding it or itself, graded)
    for n in sorted(nodes):
        node = nodes[n]
        if node["type"] != "Output" or not node["top"]:
            continue
        sources = into.get(n, [])
        if len(sources) == 1 and sources[0] in neurons and (sources[0], n) not in back:
            outputs.append((sources[0], sources[0], neurons[sources[0]].graded))
        else:
            outputs.append((n, n, True))

    records = []
    prev = rest
    for step in range(steps):
        def live_neuron(n, x):
            if n in neurons:
                return neurons[n].step(x)
            z = np.zeros(int(np.prod(shapes[n])))
            for neuron in inputs.get((step, n), []):
                z[neuron] = 1
            return z.reshape(shapes[n])

        def delayed(n, x):
            line = lines[n]
            if not line:
                return x
            line.append(x)
            return line.pop(0)

        cur = evaluate(live_neuron, prev, delayed)
        for name, source, graded in outputs:
            values = cur[source].reshape(-1)
            for i in np.nonzero(values)[0]:
                records.append((step, name, int(i), float(values[i]) if graded else 1.0))
        prev = cur
    return records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dt", type=float, default=1.0, help="the step, ms")
    ap.add_argument("--reset", choices=("subtract", "zero"), default="subtract")
    a = ap.parse_args()
    inputs = {}
    with open(a.inputs) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("step") or line.startswith("#"):
                continue
            step, layer, neuron = line.split(",")
            inputs.setdefault((int(step), layer), []).append(int(neuron))
    records = run(a.model, inputs, a.steps, a.dt, a.reset == "zero")
    with open(a.out, "w") as f:
        f.write("step,layer,neuron,value\n")
        for step, name, neuron, value in records:
            f.write("%d,%s,%d,%.17g\n" % (step, name, neuron, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
