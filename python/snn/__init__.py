"""snn: a client of the snn cluster's HTTP API (docs/reference/http-api.md).

Standard library only, so it runs in any notebook without pip:

    import snn
    c = snn.Client("https://master:7133", token=open("/home/me/.snn-token").read().strip(),
                   ca_file="ca.crt")
    job = c.submit({"name": "hello", "task": {"command": "/bin/echo", "args": ["hi"],
                                              "resources": {"cores": 1, "ksps": 10}}})
    c.wait(job)
    print(c.logs(job))
"""
from .client import Client, Executor, JobFailed, JobResult, Session, SnnError, TERMINAL

__all__ = ["Client", "Executor", "JobFailed", "JobResult", "Session", "SnnError", "TERMINAL"]
