"""The HTTP API's client: one Client per cluster and token; an Executor that runs many jobs."""
import base64
import codecs
import concurrent.futures
import json
import os
import ssl
import threading
import time
import uuid
import warnings
import urllib.error
import urllib.parse
import urllib.request

from . import nmpi

TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")


class SnnError(Exception):
    """A refusal or an error from the master: the one line snnctl would print, its code and the
    HTTP status."""

    def __init__(self, message, code="", status=0):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class JobFailed(SnnError):
    """A job that ended other than COMPLETED (Executor results)."""

    def __init__(self, job):
        super().__init__("job %s ended %s: %s" % (job["tenant_job_id"], job["state"], job["reason"]),
                         job["state"], 0)
        self.job = job


class JobResult:
    """A finished job: its record, its first task's standard output, and its id."""

    def __init__(self, job, stdout):
        self.job = job
        self.id = int(job["tenant_job_id"])
        self.state = job["state"]
        self.stdout = stdout

    def __repr__(self):
        return "JobResult(id=%d, state=%s)" % (self.id, self.state)


def _default_token():
    token = os.environ.get("SNN_TOKEN")
    if token:
        return token.strip()
    path = os.path.expanduser("~/.snn-token")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    return None


class Client:
    """A client of one master's HTTP API.

    url: https://HOST:7133 (default: $SNN_API); token: an access token (default: $SNN_TOKEN or
    ~/.snn-token; `snnctl token create` makes one); ca_file: the cluster's CA certificate
    (default: $SNN_CA_FILE or /etc/snn/tls/ca.crt); tenant: one of your other tenants.
    """

    def __init__(self, url=None, token=None, ca_file=None, tenant=None, timeout=60):
        self.url = (url or os.environ.get("SNN_API") or "https://localhost:7133").rstrip("/")
        self.token = token or _default_token()
        if not self.token:
            raise SnnError("no token: pass token=, set SNN_TOKEN, or write ~/.snn-token "
                           "(snnctl token create > ~/.snn-token)", "UNAUTHENTICATED", 401)
        self.tenant = tenant
        self.timeout = timeout
        self._context = None
        if self.url.startswith("https://"):
            ca = ca_file or os.environ.get("SNN_CA_FILE") or "/etc/snn/tls/ca.crt"
            self._context = ssl.create_default_context(cafile=ca)

    # --- plumbing ---

    def _request(self, method, path, params=None, body=None, headers=None, timeout=None):
        query = ""
        if params:
            query = "?" + urllib.parse.urlencode({k: _text(v) for k, v in params.items()
                                                  if v is not None})
        request = urllib.request.Request(self.url + path + query, method=method, data=body)
        request.add_header("Authorization", "Bearer " + self.token)
        if self.tenant:
            request.add_header("Snn-Tenant", self.tenant)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout,
                                          context=self._context)
        except urllib.error.HTTPError as e:
            if e.code == 304:
                return e
            raise _error(e) from None

    def _json(self, method, path, params=None, body=None, headers=None, timeout=None):
        with self._request(method, path, params, body, headers, timeout) as answer:
            return json.loads(answer.read() or b"null")

    # --- jobs ---

    def submit(self, job):
        """Submits a job: a dict (the job file's fields), a job file's text (YAML or JSON), or a
        path to one. Returns the job's id in its tenant."""
        answer = self._json("POST", "/v1/jobs", body=_job_text(job).encode(),
                            headers={"Content-Type": "application/yaml"})
        return int(answer["tenant_job_id"])

    def submit_nir(self, model, job, filename=None):
        """Submits a job with the network it runs, as snnctl submit does with a job file that
        names a model, from a host with nothing but this module: the master reads the model
        (a NIR file, or a JSON model) and derives the job's cores from the boards it may use.
        `model`: a path, the file's bytes, or a JSON model as a dict; `filename` names bytes
        (the model is named after it; default model.nir, or model.json for a dict). `job`: the
        job file's fields (a dict, a job file's text or a path), without `resources.model`
        or with the same name; `resources.model_step_ms` and `model_reset` apply to NIR files.
        Where the file is silent on a convention (a NIR layer without v_reset), the master's
        note comes back as a warning. Returns the job's id in its tenant."""
        data, name = _model_file(model, filename)
        answer = self._upload("/v1/jobs", [("job", None, _job_text(job).encode()),
                                           ("model", name, data)])
        return int(answer["tenant_job_id"])

    def import_model(self, model, filename=None, step_ms=None, reset=None):
        """The model a file makes, as the master reads it for a job (and snn-nir-import prints
        it), as a dict: what an experiment service's experiments take as their "model", so that
        a NIR export runs in one (`{"model": client.import_model("net.nir"), "steps": ...}`).
        `model`: a path or the file's bytes (`filename` names them); `step_ms` and `reset`: a
        NIR file's step and the reset of its layers without v_reset (as model_step_ms and
        model_reset in a job file). Where the file is silent, a warning says what is assumed."""
        data, name = _model_file(model, filename)
        parts = [("model", name, data)]
        if step_ms is not None:
            parts.append(("model_step_ms", None, repr(float(step_ms)).encode()))
        if reset is not None:
            parts.append(("model_reset", None, str(reset).encode()))
        return self._upload("/v1/models", parts)["model"]

    def _upload(self, path, parts):
        """POSTs a form (multipart/form-data) of (name, filename or None, bytes) parts; warns
        each of the answer's notes."""
        boundary = "snn-" + uuid.uuid4().hex
        body = b""
        for field, file, content in parts:
            disposition = 'form-data; name="%s"' % field
            if file is not None:
                disposition += '; filename="%s"' % "".join(
                    "_" if c in '"\r\n' else c for c in file)
            body += ("--%s\r\nContent-Disposition: %s\r\n\r\n"
                     % (boundary, disposition)).encode() + content + b"\r\n"
        body += ("--%s--\r\n" % boundary).encode()
        answer = self._json("POST", path, body=body, headers={
            "Content-Type": "multipart/form-data; boundary=" + boundary})
        for note in answer.get("notes", []):
            warnings.warn(note, stacklevel=3)
        return answer

    def job(self, job_id):
        """The job's record, as snnctl -o json show prints it."""
        return self._json("GET", "/v1/jobs/%d" % int(job_id))["job"]

    def jobs(self, states=None, all_tenants=False, user=None, start=False):
        """Jobs (every page), newest last. start=True: pending jobs carry their forecast start
        (forecast_start_ms, forecast_basis), as snnctl jobs --start shows them."""
        out, after = [], 0
        while True:
            page = self._json("GET", "/v1/jobs", {
                "states": ",".join(states) if states else None,
                "all_tenants": "true" if all_tenants else None, "user": user,
                "start": "true" if start else None, "after_id": after or None})
            out.extend(page["jobs"])
            if not page["more"] or int(page["next_after_id"]) <= after:
                return out
            after = int(page["next_after_id"])

    def wait(self, job_id, timeout=None, poll_s=60):
        """Waits until the job ends (long polls: no request while nothing changes) and returns its
        record. TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._request("GET", "/v1/jobs/%d" % int(job_id)) as answer:
            etag = answer.headers.get("ETag")
            job = json.loads(answer.read())["job"]
        while job["state"] not in TERMINAL:
            left = poll_s if deadline is None else int(deadline - time.monotonic())
            if left < 1:
                raise TimeoutError("job %s has not ended (%s)" % (job_id, job["state"]))
            wait_s = min(poll_s, left)
            with self._request("GET", "/v1/jobs/%d" % int(job_id), {"wait": "%ds" % wait_s},
                               headers={"If-None-Match": etag}, timeout=wait_s + 30) as answer:
                if answer.status == 200:  # 304: unchanged when the wait ended
                    etag = answer.headers.get("ETag")
                    job = json.loads(answer.read())["job"]
        return job

    def logs(self, job_id, task=0, stderr=False, follow=False):
        """A task's whole standard output (or error) as text. follow=True: its output as it
        grows, an iterator of text that waits for the task to start and ends when the job ends
        (as snnctl logs -f): `for text in client.logs(job, follow=True): print(text, end="")`."""
        if follow:
            return self._follow_logs(job_id, task, stderr)
        data, offset = b"", 0
        while True:
            page = self._json("GET", "/v1/jobs/%d/logs" % int(job_id),
                              {"task": task, "stderr": "true" if stderr else None,
                               "offset": offset or None})
            chunk = base64.b64decode(page["data"])
            data += chunk
            offset = int(page["offset"]) + len(chunk)
            if not chunk or offset >= int(page["size"]):
                return data.decode(errors="replace")

    def _follow_logs(self, job_id, task, stderr):
        params = {"task": task, "stderr": "true" if stderr else None, "follow": "true"}
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with self._request("GET", "/v1/jobs/%d/logs" % int(job_id), params, timeout=60) as stream:
            kind = None
            for raw in stream:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    if kind == "output":
                        text = decoder.decode(base64.b64decode(data["data"]))
                        if text:
                            yield text
                    elif kind == "attempt":
                        decoder.reset()
                    elif kind == "error":
                        raise SnnError(data["error"], data["code"])
                    elif kind == "end":
                        rest = decoder.decode(b"", final=True)
                        if rest:
                            yield rest
                        return

    def result_files(self, job_id, task=0):
        """The files a task left in its output directory ($SNN_OUTPUT_DIR), and their provenance:
        {"files": [{"name", "size", "mtime_ms"}], "provenance": {...}}."""
        answer = self._json("GET", "/v1/jobs/%d/results" % int(job_id), {"task": task})
        return {"files": answer["files"], "provenance": answer["provenance"]}

    def results(self, job_id, task=0):
        """Every file a task left in $SNN_OUTPUT_DIR: {"files": {name: bytes}, "provenance"}."""
        listing = self.result_files(job_id, task)
        files = {}
        for entry in listing["files"]:
            data, offset = b"", 0
            while True:
                page = self._json("GET", "/v1/jobs/%d/results" % int(job_id),
                                  {"task": task, "file": entry["name"], "offset": offset or None})
                chunk = base64.b64decode(page["data"])
                data += chunk
                offset += len(chunk)
                if not chunk or offset >= int(page["size"]):
                    break
            files[entry["name"]] = data
        return {"files": files, "provenance": listing["provenance"]}

    def job_usage(self, job):
        """The usage records (as snnctl usage) of a job that ended, given its record."""
        end = max([int(t["end_ms"]) for t in job["tasks"]] + [int(job["end_ms"])])
        answer = self.usage(tenant=job["tenant"], from_ms=int(job["submit_ms"]), to_ms=end + 1,
                            limit=10000)
        return [r for r in answer["records"] if r["job_id"] == job["id"]]

    def submit_job(self, source, board_type, config=None, inputs=None, command="run.py {system}",
                   wait=True, timeout=None):
        """Submits a job as EBRAINS' NMPI client does: `source` is a script, a directory of files
        or the code itself; `inputs` paths (or {name: content}); both are written into the task's
        working directory. `command` runs there ("{system}" becomes `board_type`; a .py script
        runs with python3). `config` holds job fields (cores, ksps, time_limit, env, ...).
        Without wait, returns the job's id. With it, waits for the end and returns
        {"id", "state", "reason", "job", "files" (the task's $SNN_OUTPUT_DIR, name -> bytes),
        "provenance", "usage", "stdout", "stderr"}."""
        job_id = self.submit(nmpi.job_document(source, board_type, config, inputs, command))
        if not wait:
            return job_id
        job = self.wait(job_id, timeout=timeout)
        out = {"id": job_id, "state": job["state"], "reason": job["reason"], "job": job,
               "files": {}, "provenance": None, "usage": [], "stdout": "", "stderr": ""}
        if job["tasks"]:
            results = self.results(job_id)
            out.update(files=results["files"], provenance=results["provenance"],
                       usage=self.job_usage(job), stdout=self.logs(job_id),
                       stderr=self.logs(job_id, stderr=True))
        return out

    def cancel(self, job_id):
        return self._json("POST", "/v1/jobs/%d/cancel" % int(job_id))["state"]

    def hold(self, job_id):
        return self._json("POST", "/v1/jobs/%d/hold" % int(job_id))["state"]

    def release(self, job_id):
        return self._json("POST", "/v1/jobs/%d/release" % int(job_id))["state"]

    def requeue(self, job_id):
        return self._json("POST", "/v1/jobs/%d/requeue" % int(job_id))["state"]

    # --- sessions (snnctl alloc, snnctl run --alloc) ---

    def alloc(self, cores=1, ksps=1, keepalive_s=60, timeout=None, **fields):
        """Asks for resources as a session and waits until they are granted. Returns a Session
        that renews itself every third of `keepalive_s` from a thread of its own until closed
        (use it in a `with` block): a notebook that dies stops renewing, and the cluster ends
        the session after the keepalive. `fields` are more of the job file's (name, pool,
        time_limit, replicas, task={"resources": ...} to ask for a shape)."""
        job = {"kind": "session", "keepalive": "%ds" % int(keepalive_s),
               "task": {"resources": {"cores": int(cores), "ksps": int(ksps)}}}
        job.update(fields)
        session = Session(self, self.submit(job), keepalive_s)
        try:
            session.wait_granted(timeout)
        except BaseException:
            session.close()
            raise
        return session

    def keepalive(self, job_id, keepalive_s=None):
        """Renews a session; returns when it will end unless renewed again (ms since the epoch)."""
        answer = self._json("POST", "/v1/jobs/%d/keepalive" % int(job_id),
                            {"keepalive_s": keepalive_s})
        return int(answer["expires_ms"])

    # --- experiment services ---

    def send_experiments(self, service, experiments, tenant=None, wait_for_board=None):
        """Queues experiments in a running experiment service (its job id; `tenant`: the
        service's, if it is another tenant's). Each experiment is a dict: "model" (a model as
        the JSON model file has it), "steps", "inputs" ([{"population", "neuron", "step"}]),
        "name". Returns their ids, in order. A service still pending holds no board and takes
        none: SnnError, or with `wait_for_board` (a monotonic deadline, or True: no deadline)
        this waits for it to run."""
        ids, chunk, size = [], [], 0

        def post():
            return self._json("POST", "/v1/services/%d/experiments" % int(service),
                              {"tenant": tenant}, json.dumps({"experiments": chunk}).encode(),
                              headers={"Content-Type": "application/json"})

        def send():
            pause = 0.05
            while True:
                try:
                    answer = post()
                    break
                except SnnError as e:
                    if not wait_for_board or "holds no board yet" not in str(e):
                        raise
                    if wait_for_board is not True and time.monotonic() > wait_for_board:
                        raise TimeoutError("service %d has not started" % int(service)) from e
                    time.sleep(pause)
                    pause = min(pause * 2, 1.0)
            start = int(answer["first_id"])
            ids.extend(range(start, start + int(answer["count"])))

        # Requests of at most 1,000 experiments and well under the API's 1 MiB body.
        for experiment in experiments:
            length = len(json.dumps(experiment)) + 2
            if chunk and (len(chunk) == 1000 or size + length > 900_000):
                send()
                chunk, size = [], 0
            chunk.append(experiment)
            size += length
        if chunk:
            send()
        return ids

    def experiments(self, service, tenant=None, outputs=False, after_id=0):
        """Your experiments in a service (every page): their state, board time and (outputs=True)
        output spikes. Nobody else's: not even the service's owner sees yours."""
        out = []
        while True:
            page = self._json("GET", "/v1/services/%d/experiments" % int(service), {
                "tenant": tenant, "after_id": after_id or None,
                "outputs": "true" if outputs else None, "limit": 10000})
            records = page.get("experiments", [])
            out.extend(records)
            if not records:
                return out
            after_id = int(records[-1]["id"])

    def run_experiments(self, service, experiments, tenant=None, timeout=None, poll_s=0.2):
        """Sends experiments, waits until all have run, and returns their records (with their
        output spikes) in the order given. TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ids = self.send_experiments(service, experiments, tenant,
                                    wait_for_board=True if deadline is None else deadline)
        wanted, done = set(ids), {}
        while len(done) < len(wanted):
            for r in self.experiments(service, tenant, outputs=True, after_id=min(ids) - 1):
                rid = int(r["id"])
                if rid in wanted and r["state"] in ("EXPERIMENT_DONE", "EXPERIMENT_FAILED"):
                    done[rid] = r
            if len(done) < len(wanted):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError("%d of %d experiments have not run" %
                                       (len(wanted) - len(done), len(wanted)))
                time.sleep(poll_s)
        return [done[i] for i in ids]

    # --- the cluster ---

    def pool(self):
        """Nodes and boards, as snnctl -o json pool status prints them."""
        return self._json("GET", "/v1/pool")

    def policy(self):
        return self._json("GET", "/v1/policy")["config"]

    def usage(self, **params):
        return self._json("GET", "/v1/usage", params)

    def report(self, **params):
        return self._json("GET", "/v1/report", params)

    def invoice(self, **params):
        return self._json("GET", "/v1/invoice", params)

    def watch(self, since=None, types=None, resume=True, on_open=None):
        """Events as they happen (dicts: {"rev", "time_ms", "job"|"node"|"reset"}), from after
        revision `since` (None: from now). A dropped stream is opened again from the last
        revision seen, unless resume=False. `on_open()` runs each time the stream is open."""
        last = since
        while True:
            params = {"since": last, "types": ",".join(types) if types else None}
            try:
                with self._request("GET", "/v1/events", params, timeout=60) as stream:
                    if on_open:
                        on_open()
                    event = {}
                    for raw in stream:
                        line = raw.decode().rstrip("\n")
                        if line.startswith("data: "):
                            event = json.loads(line[6:])
                        elif line == "" and event:
                            last = int(event["rev"])
                            yield event
                            event = {}
            except OSError:  # the stream dropped (a keepalive comes every 15 s)
                if not resume:
                    raise
            if not resume:
                return


class Session:
    """A granted session (Client.alloc): renews itself until closed; runs steps on its boards."""

    def __init__(self, client, job_id, keepalive_s):
        self.client, self.id, self.keepalive_s = client, job_id, keepalive_s
        self.error = None  # why renewing stopped, if it did
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew, daemon=True)
        self._renewer.start()

    def _renew(self):
        while not self._stop.wait(max(1.0, self.keepalive_s / 3.0)):
            try:
                self.client.keepalive(self.id)
            except SnnError as e:  # it ended: nothing to keep alive
                self.error = e
                return

    def wait_granted(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.client.job(self.id)
            if job["state"] == "RUNNING":
                self.record = job
                return job
            if job["state"] in TERMINAL:
                raise JobFailed(job)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("session %s not granted yet: %s" % (self.id, job["reason"]))
            time.sleep(0.05)

    def run(self, command, *args, task=0, timeout=None):
        """Runs a step (`command` with `args`) on the session's task `task`, waits for it, and
        returns a JobResult (its record and stdout); JobFailed if it did not complete."""
        step = {"kind": "step", "alloc": self.id, "alloc_task": task,
                "task": {"command": command, "args": [str(a) for a in args]}}
        job = self.client.wait(self.client.submit(step), timeout=timeout, poll_s=10)
        if job["state"] != "COMPLETED":
            raise JobFailed(job)
        return JobResult(job, self.client.logs(job["tenant_job_id"]))

    def close(self):
        """Stops renewing and releases the session's boards (cancels it)."""
        self._stop.set()
        try:
            self.client.cancel(self.id)
        except SnnError:
            pass  # ended already

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Executor(concurrent.futures.Executor):
    """Runs many small jobs: submit(job) returns a Future whose result is a JobResult (its record
    and its standard output) once the job ends, or raises JobFailed. One event stream follows
    every job: no request per job while they run. map(jobs) yields results in the jobs' order."""

    def __init__(self, client, max_pending=1000):
        self._client = client
        self._lock = threading.Lock()
        self._futures = {}  # tenant job id -> Future
        self._slots = threading.Semaphore(max_pending)
        self._shutdown = False
        self._started = threading.Event()
        self._error = None
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()
        self._started.wait()
        if self._error:
            raise self._error

    def submit(self, job):
        if self._shutdown:
            raise RuntimeError("the executor is shut down")
        self._slots.acquire()
        future = concurrent.futures.Future()
        try:
            job_id = self._client.submit(job)
        except Exception:
            self._slots.release()
            raise
        future.job_id = job_id
        with self._lock:
            self._futures[job_id] = future
        # It may have ended before we listed it: look once.
        record = self._client.job(job_id)
        if record["state"] in TERMINAL:
            self._finish(job_id, record)
        return future

    def map(self, jobs, timeout=None, chunksize=1):
        futures = [self.submit(j) for j in jobs]
        return (f.result(timeout) for f in futures)

    def shutdown(self, wait=True, *, cancel_futures=False):
        self._shutdown = True
        if cancel_futures:
            with self._lock:
                pending = list(self._futures.items())
            for job_id, future in pending:
                try:
                    self._client.cancel(job_id)
                except SnnError:
                    pass
        if wait:
            with self._lock:
                futures = list(self._futures.values())
            concurrent.futures.wait(futures)

    def _finish(self, job_id, record):
        with self._lock:
            future = self._futures.pop(job_id, None)
        if future is None:
            return
        self._slots.release()
        try:
            if record["state"] != "COMPLETED":
                future.set_exception(JobFailed(record))
            else:
                future.set_result(JobResult(record, self._client.logs(job_id)))
        except Exception as e:  # the logs could not be read
            if not future.done():
                future.set_exception(e)

    def _follow(self):
        try:
            self._follow_events()
        except Exception as e:  # the stream was refused: the constructor or the futures say why
            self._error = e
            self._started.set()
            with self._lock:
                futures = list(self._futures.values())
                self._futures.clear()
            for future in futures:
                if not future.done():
                    future.set_exception(e)

    def _follow_events(self):
        for event in self._client.watch(types=["job"], on_open=self._started.set):
            if "reset" in event:
                # Too far behind: look at every job we wait for.
                with self._lock:
                    ids = list(self._futures)
                for job_id in ids:
                    record = self._client.job(job_id)
                    if record["state"] in TERMINAL:
                        self._finish(job_id, record)
                continue
            job = event.get("job")
            if job and job["state"] in TERMINAL:
                job_id = int(job["tenant_job_id"])
                with self._lock:
                    ours = job_id in self._futures
                if ours:
                    self._finish(job_id, self._client.job(job_id))


def _model_file(model, filename):
    """A model's bytes and file name: from a path, bytes (named `filename`, default model.nir)
    or a JSON model as a dict."""
    if isinstance(model, dict):
        return json.dumps(model).encode(), filename or "model.json"
    if isinstance(model, (bytes, bytearray)):
        return bytes(model), filename or "model.nir"
    with open(model, "rb") as f:
        return f.read(), filename or os.path.basename(os.fspath(model))


def _job_text(job):
    """A job as its file's text: from a dict, a file's text, or a path to one."""
    if isinstance(job, dict):
        return json.dumps(job)
    if isinstance(job, (str, os.PathLike)) and "\n" not in str(job) and os.path.exists(job):
        with open(job) as f:
            return f.read()
    return str(job)


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _error(e):
    try:
        body = json.loads(e.read())
        return SnnError(body.get("error", str(e)), body.get("code", ""), e.code)
    except (ValueError, AttributeError):
        return SnnError("HTTP %d: %s" % (e.code, e.reason), "", e.code)
