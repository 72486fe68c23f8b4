#!/usr/bin/python3
"""Runs a notebook as Jupyter would (nbclient, the python3 kernel), cell by cell, and prints
what each cell printed; exits 1 naming the cell that failed.

usage: run_notebook.py NOTEBOOK.ipynb
The notebook's host is a notebook user's: the test gives it a PATH with no snnctl, no MUNGE
socket, and only SNN_API, SNN_TOKEN and SNN_CA_FILE to reach the cluster.
"""
import shutil
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main(path):
    if shutil.which("snnctl") or shutil.which("munge"):
        sys.exit("run_notebook: snnctl or munge is on PATH: a notebook host has neither")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3")
    try:
        client.execute()
    except CellExecutionError as e:
        sys.exit("run_notebook: a cell failed:\n%s" % e)
    for number, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        print("== cell %d" % number)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                sys.stdout.write(out.get("text", ""))
            elif out.get("output_type") == "error":
                sys.exit("run_notebook: cell %d: %s" % (number, out.get("evalue")))


if __name__ == "__main__":
    main(sys.argv[1])
