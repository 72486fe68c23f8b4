"""Jobs the way EBRAINS' NMPI client submits them: a script and its inputs in, the output files,
the provenance and the usage out (Client.submit_job)."""
import base64
import os
import shlex

RESOURCE_KEYS = ("cores", "ksps", "streams", "shape", "units", "board_type")
TASK_KEYS = ("env", "memory_mb", "max_processes")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _entry(content):
    """A job file's `files:` entry: text as it is, anything else as base64."""
    if isinstance(content, str):
        content = content.encode()
    try:
        text = content.decode("utf-8")
        if "\0" not in text:
            return text
    except UnicodeDecodeError:
        pass
    return {"base64": base64.b64encode(content).decode()}


def source_files(source, script):
    """The files `source` stands for: a file, a directory's files (not its subdirectories), or
    the code itself (saved as `script`)."""
    if "\n" not in source and os.path.isfile(source):
        return {os.path.basename(source): _read(source)}
    if "\n" not in source and os.path.isdir(source):
        files = {}
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            if os.path.isdir(path):
                raise ValueError("source %s holds the directory %s: a job's files are one "
                                 "directory's files (put data on a shared file system)"
                                 % (source, name))
            files[name] = _read(path)
        return files
    if "\n" not in source and (os.sep in source or source.endswith(".py")):
        raise FileNotFoundError("source %s: no such file or directory" % source)
    return {script: source.encode()}


def input_files(inputs):
    if not inputs:
        return {}
    if isinstance(inputs, dict):
        return dict(inputs)
    return {os.path.basename(path): _read(path) for path in inputs}


def job_document(source, board_type, config, inputs, command):
    """The job file's fields for submit_job's arguments."""
    command = command.replace("{system}", board_type)
    words = shlex.split(command)
    if not words:
        raise ValueError("command is empty")
    script = words[0] if words[0].endswith(".py") else "run.py"
    if words[0].endswith(".py"):
        words.insert(0, "python3")
    files = source_files(source, script)
    for name, content in input_files(inputs).items():
        if name in files:
            raise ValueError("input %s has the name of a source file" % name)
        files[name] = content
    config = dict(config or {})
    resources = dict(config.pop("resources", {}))
    for key in RESOURCE_KEYS:
        if key in config:
            resources[key] = config.pop(key)
    resources.setdefault("board_type", board_type)
    resources.setdefault("cores", 1)
    resources.setdefault("ksps", 100)
    task = {"command": "/bin/sh", "args": ["-c", shlex.join(words)], "resources": resources,
            "files": {name: _entry(content) for name, content in files.items()}}
    for key in TASK_KEYS:
        if key in config:
            task[key] = config.pop(key)
    document = {"name": config.pop("name", "nmpi-" + script.rsplit(".", 1)[0]), "task": task}
    document.update(config)
    return document
