#!/usr/bin/python3
"""The Python client (python/snn) against real daemons: tests/integration/python_client_test.cc
starts a master and an agent and runs this with SNN_API, SNN_TOKEN, SNN_CA_FILE (a token of a
member of lab-a) and SNN_OTHER_TOKEN (a member of lab-b only) in the environment."""
import os
import threading
import time
import unittest
import warnings

import snn


def echo_job(text, name="echo"):
    return {"name": name, "tenant": "lab-a", "time_limit": "5m",
            "task": {"command": "/bin/sh", "args": ["-c", "echo " + text],
                     "resources": {"cores": 1, "ksps": 10, "streams": 1}}}


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = snn.Client(tenant="lab-a")


    def test_submit_wait_logs(self):
        job_id = self.client.submit(echo_job("hello from python"))
        job = self.client.wait(job_id, timeout=120)
        self.assertEqual(job["state"], "COMPLETED", job["reason"])
        self.assertEqual(self.client.logs(job_id), "hello from python\n")
        self.assertEqual(self.client.job(job_id)["state"], "COMPLETED")
        self.assertIn(job_id, [int(j["tenant_job_id"]) for j in self.client.jobs()])

    def test_a_job_file_path_or_text(self):
        path = os.path.join(os.environ["TEST_DIR"], "job.yaml")
        with open(path, "w") as f:
            f.write("name: from-file\ntenant: lab-a\ntask:\n  command: /bin/true\n"
                    "  resources: {cores: 1, ksps: 10, streams: 1}\n")
        for job in (path, open(path).read()):
            self.assertEqual(self.client.wait(self.client.submit(job), timeout=120)["state"],
                             "COMPLETED")

    def test_watch_sees_the_transitions(self):
        opened = threading.Event()
        events = []  # (tenant job id, state), in the order they came
        lock = threading.Lock()

        def follow():
            for event in self.client.watch(types=["job"], on_open=opened.set):
                job = event.get("job")
                with lock:
                    events.append((int(job["tenant_job_id"]), job["state"]))
                if job["name"] == "watched" and job["state"] == "COMPLETED":
                    return

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        self.assertTrue(opened.wait(60))
        job_id = self.client.submit(echo_job("watched", "watched"))
        thread.join(120)
        self.assertFalse(thread.is_alive(), events)
        states = []  # a reason may change while the state does not
        with lock:
            for i, state in events:
                if i == job_id and (not states or states[-1] != state):
                    states.append(state)
        self.assertEqual(states, ["PENDING", "RUNNING", "COMPLETED"])

    def test_cancel(self):
        job_id = self.client.submit({"name": "long", "tenant": "lab-a", "time_limit": "10m",
                                     "task": {"command": "/bin/sleep", "args": ["600"],
                                              "resources": {"cores": 1, "ksps": 10}}})
        self.client.cancel(job_id)
        self.assertEqual(self.client.wait(job_id, timeout=120)["state"], "CANCELLED")

    def test_pending_jobs_carry_their_forecast_start(self):
        first = self.client.submit({"name": "long", "tenant": "lab-a", "time_limit": "10m",
                                    "task": {"command": "/bin/sleep", "args": ["600"],
                                             "resources": {"cores": 1, "ksps": 10}}})
        second = self.client.submit({"name": "after", "tenant": "lab-a", "time_limit": "1m",
                                     "depends": {"after_ok": [first]},
                                     "task": {"command": "/bin/true",
                                              "resources": {"cores": 1, "ksps": 10}}})
        try:
            pending = {int(j["tenant_job_id"]): j
                       for j in self.client.jobs(states=["PENDING"], start=True)}
            self.assertEqual(pending[second].get("forecast_basis"), "held", pending[second])
            self.assertEqual(self.client.jobs(states=["PENDING"])[0].get("forecast_basis", ""), "")
        finally:
            self.client.cancel(first)

    def test_submit_nir_runs_a_nir_export_and_warns_which_reset_it_assumed(self):
        path = os.path.join(os.environ["SNN_SOURCE_DIR"], "etc/models/nir/lif_rockpool.nir")
        job = {"name": "nir", "tenant": "lab-a", "time_limit": "5m",
               "task": {"command": os.environ["SNN_EXAMPLE_NIR"], "args": ["--steps", "50"],
                        "resources": {"ksps": 200, "streams": 1}}}
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            job_id = self.client.submit_nir(path, job)
        self.assertIn("gives no v_reset", str(said[0].message))
        done = self.client.wait(job_id, timeout=120)
        self.assertEqual(done["state"], "COMPLETED", done["reason"])
        self.assertEqual(done["spec"]["task"]["resources"]["model"], "lif_rockpool.nir")
        self.assertIn("most active output neuron: ", self.client.logs(job_id))
        # The bytes alone, with the reset chosen: no warning; a broken file: one line.
        job["task"]["resources"]["model_reset"] = "zero"
        with open(path, "rb") as f, warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            self.client.submit_nir(f.read(), job, filename="lif.nir")
        self.assertEqual(said, [])
        with self.assertRaises(snn.SnnError) as refused:
            self.client.submit_nir(b"not hdf5", job, filename="bad.nir")
        self.assertEqual(str(refused.exception),
                         "bad.nir: not a NIR file (NIR files are HDF5; this one is not, or is "
                         "cut short)")

    def test_logs_follow_gives_the_output_as_it_grows_and_ends_with_the_job(self):
        job = echo_job("one; sleep 0.3; echo two; sleep 0.3; echo three", name="talks")
        job_id = self.client.submit(job)
        chunks = list(self.client.logs(job_id, follow=True))
        self.assertEqual("".join(chunks), "one\ntwo\nthree\n")
        self.assertEqual(self.client.job(job_id)["state"], "COMPLETED")

    def test_refusals_are_one_line_errors(self):
        with self.assertRaises(snn.SnnError) as bad:
            self.client.submit({"name": "bad", "task": {"command": "/bin/true"}})
        self.assertEqual(bad.exception.code, "INVALID_ARGUMENT")
        self.assertEqual(bad.exception.status, 400)
        self.assertNotIn("\n", bad.exception.message)
        job_id = self.client.submit(echo_job("mine"))
        other = snn.Client(token=os.environ["SNN_OTHER_TOKEN"], tenant="lab-a")
        with self.assertRaises(snn.SnnError) as refused:
            other.job(job_id)
        self.assertEqual(refused.exception.status, 403)
        self.assertIn("lab-a", refused.exception.message)
        with self.assertRaises(snn.SnnError) as nobody:
            snn.Client(token="snntok.made-up").pool()
        self.assertEqual(nobody.exception.status, 401)

    def test_submit_job_as_nmpi_returns_the_output_files_provenance_and_usage(self):
        code = "\n".join([
            "import os, sys",
            "print('running on', sys.argv[1])",
            "words = open('spikes.txt').read().split()",
            "out = os.environ['SNN_OUTPUT_DIR']",
            "os.makedirs(os.path.join(out, 'raw'))",
            "open(os.path.join(out, 'count.txt'), 'w').write(str(len(words)))",
            "open(os.path.join(out, 'raw', 'bytes.bin'), 'wb').write(open('table.bin', 'rb').read())",
            ""])
        table = bytes(range(256)) * 3
        result = self.client.submit_job(
            code, "sim-v1", config={"tenant": "lab-a", "cores": 2, "ksps": 50, "streams": 1,
                                    "time_limit": "5m"},
            inputs={"spikes.txt": "3 1 4 1 5", "table.bin": table}, command="run.py {system}")
        self.assertEqual(result["state"], "COMPLETED", result["reason"] + result["stderr"])
        self.assertEqual(result["stdout"], "running on sim-v1\n")
        self.assertEqual(result["files"], {"count.txt": b"5", "raw/bytes.bin": table})
        provenance = result["provenance"]
        self.assertEqual(int(provenance["tenant_job_id"]), result["id"])
        self.assertEqual(provenance["board_type"], "sim-v1")
        self.assertEqual(provenance["task_state"], "TASK_EXITED")
        self.assertEqual(len(result["usage"]), 1, result["usage"])
        self.assertEqual(result["usage"][0]["cores"], 2)
        # Without wait: the id; the files are written where the task starts, and may be a
        # directory's files.
        source = os.path.join(os.environ["TEST_DIR"], "experiment")
        os.makedirs(source, exist_ok=True)
        with open(os.path.join(source, "main.py"), "w") as f:
            f.write("import os\nopen(os.environ['SNN_OUTPUT_DIR'] + '/seen', 'w')"
                    ".write(' '.join(sorted(os.listdir('.'))))\n")
        with open(os.path.join(source, "params.json"), "w") as f:
            f.write("{}")
        job_id = self.client.submit_job(source, "sim-v1", config={"tenant": "lab-a", "streams": 1},
                                        command="main.py", wait=False)
        self.assertEqual(self.client.wait(job_id, timeout=120)["state"], "COMPLETED")
        self.assertEqual(self.client.results(job_id)["files"]["seen"], b"main.py params.json")
        # Another tenant's member sees neither the files nor their names.
        other = snn.Client(token=os.environ["SNN_OTHER_TOKEN"], tenant="lab-a")
        with self.assertRaises(snn.SnnError) as refused:
            other.results(job_id)
        self.assertEqual(refused.exception.status, 403, refused.exception.message)

    def test_a_session_runs_steps_and_is_released_when_closed(self):
        with self.client.alloc(cores=1, ksps=10, keepalive_s=30, tenant="lab-a",
                               time_limit="5m", timeout=120) as session:
            step = session.run("/bin/echo", "step", 1, timeout=120)
            self.assertEqual(step.stdout, "step 1\n")
            with self.assertRaises(snn.JobFailed):
                session.run("/bin/false", timeout=120)
            self.assertGreater(self.client.keepalive(session.id), 0)
        self.assertEqual(self.client.job(session.id)["state"], "CANCELLED")

    def test_experiments_come_back_to_their_sender_only(self):
        service = self.client.submit({
            "kind": "service", "tenant": "lab-a", "time_limit": "5m",
            "service": {"period_ms": 5, "tenants": ["lab-b"]},
            "task": {"resources": {"cores": 4, "ksps": 100}}})
        # Sent at once: the service may still be pending, and run_experiments waits for it.
        model = {"name": "relay", "timestep_ms": 1, "populations": [
            {"name": "in", "size": 2, "role": "input"},
            {"name": "out", "size": 2, "role": "output"}],
            "projections": [{"from": "in", "to": "out", "connectivity": "one_to_one",
                             "weight": 1.5, "delay_steps": 1}]}
        experiment = {"model": model, "steps": 5,
                      "inputs": [{"population": "in", "neuron": 1, "step": 0}]}
        mine = self.client.run_experiments(service, [experiment] * 3, timeout=120)
        self.assertEqual([r["state"] for r in mine], ["EXPERIMENT_DONE"] * 3)
        self.assertEqual(mine[0]["outputs"], [{"population": "out", "neuron": 1, "step": 1}])
        other = snn.Client(token=os.environ["SNN_OTHER_TOKEN"], tenant="lab-b")
        theirs = other.run_experiments(service, [experiment], tenant="lab-a", timeout=120)
        self.assertEqual(theirs[0]["state"], "EXPERIMENT_DONE")
        self.assertEqual([r["id"] for r in other.experiments(service, tenant="lab-a")],
                         [theirs[0]["id"]])
        self.assertEqual(len(self.client.experiments(service)), 3)
        self.client.cancel(service)

    def test_a_nir_export_runs_in_an_experiment_service_through_import_model(self):
        service = self.client.submit({
            "kind": "service", "tenant": "lab-a", "time_limit": "5m",
            "service": {"period_ms": 5}, "task": {"resources": {"cores": 4, "ksps": 100}}})
        path = os.path.join(os.environ["SNN_SOURCE_DIR"], "etc/models/nir/lif_rockpool.nir")
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            model = self.client.import_model(path)
        self.assertIn("gives no v_reset", str(said[0].message))
        self.assertEqual(model["name"], "lif_rockpool")
        self.assertEqual(model["dynamics"], "nir")
        inputs = [{"population": model["populations"][0]["name"], "neuron": 0, "step": 0}]
        done = self.client.run_experiments(service, [{"model": model, "steps": 5,
                                                      "inputs": inputs}], timeout=120)
        self.assertEqual(done[0]["state"], "EXPERIMENT_DONE", done[0])
        self.assertTrue(done[0]["outputs"], done[0])  # the input drives the neuron past threshold
        with self.assertRaises(snn.SnnError) as refused:
            self.client.import_model(path, step_ms=5000)
        self.assertIn("model_step_ms must be a step in ms", str(refused.exception))
        self.client.cancel(service)

    def test_pool(self):
        pool = self.client.pool()
        self.assertEqual([n["name"] for n in pool["nodes"]], ["node1"])
        self.assertEqual(pool["nodes"][0]["state"], "UP")

    def test_an_executor_runs_200_jobs_and_returns_their_results_in_order(self):
        with snn.Executor(self.client) as pool:
            results = list(pool.map(echo_job(str(i), "exec-%d" % i) for i in range(200)))
        self.assertEqual([r.stdout for r in results], ["%d\n" % i for i in range(200)])
        self.assertTrue(all(r.state == "COMPLETED" for r in results))
        # A job that fails is the future's exception.
        with snn.Executor(self.client) as pool:
            future = pool.submit({"name": "fails", "tenant": "lab-a",
                                  "task": {"command": "/bin/false",
                                           "resources": {"cores": 1, "ksps": 10}}})
            with self.assertRaises(snn.JobFailed) as failed:
                future.result(timeout=120)
        self.assertEqual(failed.exception.job["state"], "FAILED")


if __name__ == "__main__":
    unittest.main(verbosity=2)
