#!/usr/bin/env python3
"""ufo-batch's bridge to OSWorld's own Python code (the `desktop-env` package).

The runner embeds this file and runs it with the OSWorld venv's python inside a task's desktop
jail, next to OSWorld's unmodified in-VM server (which the runner starts there). Tasks are set up
by OSWorld's SetupController and scored by OSWorld's DesktopEnv.evaluate(), getters and metrics,
unchanged; this file only builds the DesktopEnv object a VM provider would have built, runs the
setup steps one at a time so each is timed, records what the getters returned and what the metrics
said, and classifies failures.

    python driver.py probe   one JSON object on stdin -> one JSON line on stdout
    python driver.py serve   JSON lines: one request per stdin line, one answer per stdout line

Everything this process prints on stdout is protocol: the real stdout is duplicated for the
protocol at start, and file descriptor 1, sys.stdout and logging all go to stderr (OSWorld's code
prints, and the commands it runs inherit descriptor 1).

Requests of `serve` (strictly one at a time; EOF or {"op": "quit"} ends it with exit status 0):

  {"op": "setup", "task": {...OSWorld task...}, "cache_dir": BASE, "server": "http://127.0.0.1:5000",
   "screen": [1920, 1080], "wait": 60}
      -> {"ok": {"seconds": s, "server_seconds": s, "steps": [{"type": t, "seconds": s}, ...]}}
      BASE is OSWorld's cache_dir_base: OSWorld itself joins the task id onto it, so the task's
      files are BASE/<task id>/... (download step: <uuid5(NAMESPACE_URL, url)>_<basename(path)>;
      cloud_file getter: <dest>; vm_file getter writes its result to <dest> there too).
  {"op": "evaluate", "last_action": "DONE" | "FAIL" | null}
      -> {"ok": {"score": x, "seconds": s, "postconfig_seconds": s, "details": [...]}}
  {"op": "quit"}

Errors: {"error": "<one sentence>", "kind": KIND, "detail": "<end of the traceback>"} with KIND
  machine    the server does not answer, the venv is broken, the request is not understood
  task       the task file is wrong: unknown step/getter/metric, bad parameters, unsafe path
  setup      a setup step raised (which step, its type, why)
  missing    a package this venv leaves out (a stub) was called (which package)
  evaluator  a postconfig step, getter or metric raised, or the score is not a number in [0, 1]
"""

import os
import sys

# -- Protocol output first: nothing else may ever reach the real stdout. ----------------------
_PROTOCOL = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import ast  # noqa: E402
import dis  # noqa: E402
import functools  # noqa: E402
import importlib  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import numbers  # noqa: E402
import platform  # noqa: E402
import posixpath  # noqa: E402
import re  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("ufo-batch.osworld")

# OSWorld's controllers/setup.py runs dotenv.load_dotenv() (which searches every folder above the
# venv for a .env file) and loads a proxy list from a path relative to the working directory at
# import time. Neither is wanted: no .env, no proxy list (so no "Failed to load proxies" error).
os.environ["PYTHON_DOTENV_DISABLED"] = "1"
os.environ["PROXY_CONFIG_FILE"] = ""

HOME = "/home/user"  # the path OSWorld's task files name; the jail binds the task's home there
DETAIL_LIMIT = 2000

# -- Stubs for the heavy packages this venv leaves out -----------------------------------------
# Every package desktop_env imports that the LibreOffice/OS getters and metrics do not need.
# The real package is used when it is installed; a stub only stands in for a missing one.
HEAVY_PACKAGES = frozenset({
    "playwright", "pydrive", "gymnasium", "easyocr", "librosa", "cv2", "skimage", "fitz",
    "borb", "acoustid", "fastdtw", "imagehash", "PyPDF2", "pypdf", "pdfplumber", "bs4",
    "mutagen",
    # Only the VM providers import these (never loaded here), listed so that a stray import
    # of one is a clear "missing" rather than a crash.
    "psutil", "boto3", "botocore", "docker", "azure", "alibabacloud_ecs20140526",
    "alibabacloud_tea_openapi", "alibabacloud_tea_util", "volcenginesdkautoscaling",
    "volcenginesdkcore", "volcenginesdkecs",
})
STUBBED = {}  # module name -> its top-level package, for every stub module made


class MissingPackage(ImportError):
    """A stubbed package was used. `.name` (ImportError's own field) is its top-level module."""

    def __init__(self, package, what):
        super().__init__(f"{package} is not installed (needed by {what})", name=package)
        self.package = package


class _StubAttr:
    """Any attribute of a stub: itself a stub; using it raises MissingPackage."""
    __slots__ = ("_ufo_package", "_ufo_path")

    def __init__(self, package, path):
        object.__setattr__(self, "_ufo_package", package)
        object.__setattr__(self, "_ufo_path", path)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubAttr(self._ufo_package, f"{self._ufo_path}.{name}")

    def __call__(self, *args, **kwargs):
        raise MissingPackage(self._ufo_package, self._ufo_path)

    def __mro_entries__(self, bases):
        return ()  # `class DesktopEnv(gym.Env)` becomes a plain class

    def __getitem__(self, key):
        raise MissingPackage(self._ufo_package, self._ufo_path)

    def __iter__(self):
        raise MissingPackage(self._ufo_package, self._ufo_path)

    def __enter__(self):
        raise MissingPackage(self._ufo_package, self._ufo_path)

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<stub {self._ufo_path}: {self._ufo_package} is not installed>"


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StubAttr(self.__dict__.get("_ufo_package", self.__name__), f"{self.__name__}.{name}")


class _StubLoader(importlib.abc.Loader):
    def __init__(self, package):
        self.package = package

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        module._ufo_package = self.package
        STUBBED[module.__name__] = self.package


def _real_spec(name, path=None, target=None):
    """The spec the other finders give `name` (None: not installed). Never makes a stub."""
    for finder in sys.meta_path:
        if isinstance(finder, _StubFinder):
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec(name, path, target) if path is not None else find_spec(name, None)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            return spec
    return None


@functools.lru_cache(maxsize=None)
def package_missing(top):
    """A heavy package that is not installed (so it is, or would be, a stub)."""
    if top not in HEAVY_PACKAGES:
        return False
    if top in STUBBED:
        return True
    return _real_spec(top) is None


class _StubFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top not in HEAVY_PACKAGES:
            return None
        if fullname != top:
            if top not in STUBBED:
                return None  # a submodule of an installed package: import it normally
        elif _real_spec(top) is not None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(top), is_package=True)


sys.meta_path.insert(0, _StubFinder())


def _is_stub(obj):
    return isinstance(obj, (_StubAttr, _StubModule))


def _stub_package(obj):
    if isinstance(obj, _StubAttr):
        return obj._ufo_package
    return obj.__dict__.get("_ufo_package", obj.__name__.partition(".")[0])


# -- Importing OSWorld's code ---------------------------------------------------------------------
_OSW = None  # namespace of OSWorld's objects once imported
_IMPORT_ERROR = None


def load_osworld():
    """Import desktop_env's DesktopEnv, controllers, getters and metrics (once)."""
    global _OSW, _IMPORT_ERROR
    if _OSW is not None or _IMPORT_ERROR is not None:
        return _OSW
    try:
        started = time.monotonic()
        from desktop_env.desktop_env import DesktopEnv
        from desktop_env.controllers.python import PythonController
        from desktop_env.controllers.setup import SetupController
        from desktop_env.evaluators import getters, metrics
        import requests
        try:
            from importlib.metadata import version
            de_version = version("desktop-env")
        except Exception:  # noqa: BLE001 - the version is informative only
            de_version = "unknown"
        _OSW = types.SimpleNamespace(DesktopEnv=DesktopEnv, PythonController=PythonController,
                                     SetupController=SetupController, getters=getters,
                                     metrics=metrics, requests=requests, version=de_version)
        log.info("desktop_env %s imported in %.2f s; stubbed: %s", de_version,
                 time.monotonic() - started, ", ".join(sorted(set(STUBBED.values()))) or "nothing")
    except BaseException as e:  # noqa: BLE001 - reported on every request
        _IMPORT_ERROR = e
        log.exception("importing desktop_env failed")
    return _OSW


# -- Static reachability: which stubbed packages could a function call? -------------------------
_DE_PREFIX = "desktop_env"
_VISIT_BUDGET = 50000


def _ours_module_name(name):
    return isinstance(name, str) and (name == _DE_PREFIX or name.startswith(_DE_PREFIX + "."))


def _ours(obj):
    if isinstance(obj, types.ModuleType):
        return _ours_module_name(obj.__name__)
    return _ours_module_name(getattr(obj, "__module__", None))


class _Reach:
    """Walks the names a function's code uses, resolved in its globals (and, for a method, in its
    class), recursing into functions, classes and modules of desktop_env; collects stubs met."""

    def __init__(self):
        self.needs = set()
        self.seen = set()
        self.budget = _VISIT_BUDGET

    def value(self, obj, names):
        if self.budget <= 0:
            return
        self.budget -= 1
        if _is_stub(obj):
            self.needs.add(_stub_package(obj))
            return
        if isinstance(obj, types.ModuleType):
            if _ours(obj):
                members = vars(obj)
                for name in names:
                    if name in members:
                        self.value(members[name], names)
            return
        if isinstance(obj, (types.MethodType,)):
            self.value(obj.__func__, names)
            return
        if isinstance(obj, (staticmethod, classmethod)):
            self.value(obj.__func__, names)
            return
        if isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                if f is not None:
                    self.value(f, names)
            return
        if isinstance(obj, functools.partial):
            self.value(obj.func, names)
            for a in list(obj.args) + list(obj.keywords.values()):
                self.value(a, names)
            return
        if isinstance(obj, types.FunctionType):
            if id(obj) in self.seen or not _ours(obj):
                return
            self.seen.add(id(obj))
            self.function(obj)
            return
        if isinstance(obj, type):
            if not _ours(obj):
                return
            for cls in obj.__mro__:
                if not _ours(cls):
                    continue
                for name in set(names) | {"__init__", "__call__", "__new__"}:
                    if name in cls.__dict__:
                        self.value(cls.__dict__[name], names)
            return
        if isinstance(obj, (dict, list, tuple, set, frozenset)) and len(obj) <= 500:
            items = obj.values() if isinstance(obj, dict) else obj
            for item in items:
                if _is_stub(item) or isinstance(item, (types.FunctionType, type, functools.partial)):
                    self.value(item, names)

    def function(self, func):
        owner = None
        parts = func.__qualname__.split(".")
        if len(parts) > 1 and "<locals>" not in parts:
            owner = func.__globals__.get(parts[0])
            if not isinstance(owner, type):
                owner = None
        for cell in func.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:
                continue
            self.value(contents, set(func.__code__.co_names))
        for default in (func.__defaults__ or ()):
            if _is_stub(default):
                self.value(default, ())
        self.code(func.__code__, func.__globals__, owner)

    def code(self, code, globs, owner):
        names = set(code.co_names)
        for name in code.co_names:
            if name in globs:
                self.value(globs[name], names)
            if owner is not None:
                for cls in owner.__mro__:
                    if _ours(cls) and name in cls.__dict__:
                        self.value(cls.__dict__[name], names)
                        break
        consts = []
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_CONST":
                consts.append(ins.argval)
            elif ins.opname == "IMPORT_NAME":
                level = consts[-2] if len(consts) >= 2 and isinstance(consts[-2], int) else 0
                self.imported(ins.argval, level, globs, names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const, globs, owner)

    def imported(self, name, level, globs, names):
        """An `import` inside a function."""
        if level:
            try:
                name = importlib.util.resolve_name("." * level + (name or ""), globs.get("__package__"))
            except (ImportError, ValueError):
                return
        top = name.partition(".")[0]
        if top in HEAVY_PACKAGES:
            if package_missing(top):
                self.needs.add(top)
            return
        if _ours_module_name(name):
            module = sys.modules.get(name)
            if module is None:
                try:
                    module = importlib.import_module(name)
                except Exception:  # noqa: BLE001 - unimportable: it would fail when called
                    return
            self.value(module, names)


def needs_of(func):
    reach = _Reach()
    reach.value(func, set())
    return sorted(reach.needs)


def _only_raises_not_implemented(func):
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return False
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    body = [b for b in body if not isinstance(b, ast.Pass)]
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    exc = body[0].exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def verdict_setup(osw, name):
    if not isinstance(name, str) or not name:
        return {"unknown": f"{name!r} is not a setup step type"}
    func = getattr(osw.SetupController, f"_{name}_setup", None)
    if func is None:
        return {"unknown": f"desktop-env's SetupController has no _{name}_setup (setup step type {name})"}
    if _only_raises_not_implemented(func):
        return {"unknown": f"desktop-env's SetupController._{name}_setup is not implemented "
                           f"(it raises NotImplementedError)"}
    needs = needs_of(func)
    return {"needs": needs} if needs else {"ok": True}


def verdict_getter(osw, name):
    if not isinstance(name, str) or not name:
        return {"unknown": f"{name!r} is not a getter type"}
    func = getattr(osw.getters, f"get_{name}", None)
    if func is None or not callable(func):
        return {"unknown": f"desktop-env has no getter get_{name} (getter type {name})"}
    needs = needs_of(func)
    return {"needs": needs} if needs else {"ok": True}


def verdict_metric(osw, name):
    if not isinstance(name, str) or not name:
        return {"unknown": f"{name!r} is not a metric name"}
    func = getattr(osw.metrics, name, None)
    if func is None or not callable(func) or isinstance(func, types.ModuleType):
        return {"unknown": f"desktop-env has no metric {name}"}
    needs = needs_of(func)
    return {"needs": needs} if needs else {"ok": True}


def all_names(osw, key):
    """Every setup step type, getter type or metric name desktop-env has."""
    if key == "setup":
        return [n[1:-len("_setup")] for n in dir(osw.SetupController)
                if n.startswith("_") and n.endswith("_setup") and not n.startswith("__")
                and len(n) > len("__setup")]
    if key == "getters":
        return [n[len("get_"):] for n in dir(osw.getters)
                if n.startswith("get_") and callable(getattr(osw.getters, n, None))]
    return [n for n in dir(osw.metrics) if not n.startswith("_")
            and isinstance(getattr(osw.metrics, n, None), types.FunctionType)
            and _ours(getattr(osw.metrics, n))]


# -- Answers ---------------------------------------------------------------------------------
class Failure(Exception):
    def __init__(self, kind, message, exc=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.exc = exc


def _jsonable(value, depth=0):
    if depth > 8:
        return repr(value)[:200]
    if type(value).__module__ == "numpy" and callable(getattr(value, "item", None)) \
            and getattr(value, "shape", None) == ():
        value = value.item()  # a numpy scalar: its Python value
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else repr(f)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v, depth + 1) for v in value]
    return repr(value)[:200]


def send(obj):
    _PROTOCOL.write(json.dumps(_jsonable(obj), ensure_ascii=False, allow_nan=False) + "\n")
    _PROTOCOL.flush()


def _detail(exc):
    if exc is None:
        return ""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-DETAIL_LIMIT:]


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _missing_in(exc):
    for e in _chain(exc):
        if isinstance(e, MissingPackage):
            return e
    return None


def _connection_error_in(exc):
    osw = _OSW
    if osw is None:
        return None
    for e in _chain(exc):
        if isinstance(e, (osw.requests.exceptions.ConnectionError, osw.requests.exceptions.Timeout)):
            return e
    return None


def _one_line(exc):
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def classify(exc, context, default_kind):
    """A Failure for an exception raised while doing `context` (e.g. "setup step 2 (open)")."""
    if isinstance(exc, Failure):
        return exc
    missing = _missing_in(exc)
    if missing is not None:
        return Failure("missing", f"{context} needs the Python package {missing.package}, which is not "
                                  f"installed in the OSWorld venv ({_one_line(missing)})", exc)
    conn = _connection_error_in(exc)
    if conn is not None:
        return Failure("machine", f"{context} lost OSWorld's server: {_one_line(conn)}", exc)
    return Failure(default_kind, f"{context} failed: {_one_line(exc)}", exc)


# -- Checking a task before it runs ------------------------------------------------------------
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _desktop_path_ok(path):
    """A path on the desktop a step writes or opens: under /home/user or /tmp (`~` is /home/user;
    a relative path is relative to the server's working directory, /home/user), never with '..'."""
    if not isinstance(path, str) or not path or "\0" in path:
        return False
    if ".." in path.split("/"):
        return False
    if path == "~" or path.startswith("~/"):
        path = HOME + path[1:]
    if not path.startswith("/"):
        return True
    norm = posixpath.normpath(path)
    return norm in (HOME, "/tmp") or norm.startswith(HOME + "/") or norm.startswith("/tmp/")


def _cache_name_ok(name):
    """A file name inside the task's cache folder (getter `dest`, step `stdout`/`stderr`)."""
    return isinstance(name, str) and bool(name) and "/" not in name and "\0" not in name \
        and name not in (".", "..")


def _check_step(osw, controller, step, where):
    if not isinstance(step, dict) or not isinstance(step.get("type"), str):
        raise Failure("task", f"{where} is not an object with a string \"type\"")
    kind = step["type"]
    params = step.get("parameters")
    if not isinstance(params, dict):
        raise Failure("task", f"{where} ({kind}) has no \"parameters\" object")
    method = getattr(controller, f"_{kind}_setup", None)
    if method is None:
        raise Failure("task", f"{where} has the unknown setup step type {kind!r} "
                              f"(desktop-env's SetupController has no _{kind}_setup)")
    if _only_raises_not_implemented(getattr(osw.SetupController, f"_{kind}_setup")):
        raise Failure("task", f"{where} has the setup step type {kind!r}, which desktop-env does not "
                              f"implement (NotImplementedError)")
    try:
        inspect.signature(method).bind(**params)
    except TypeError as e:
        raise Failure("task", f"{where} ({kind}) has bad parameters: {e}") from e
    paths = []
    if kind in ("download", "upload_file"):
        files = params.get("files")
        if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
            raise Failure("task", f"{where} ({kind}) needs \"files\": a list of objects")
        for f in files:
            if not isinstance(f.get("path"), str) or not f["path"]:
                raise Failure("task", f"{where} ({kind}) has a file without a \"path\"")
            if kind == "download" and (not isinstance(f.get("url"), str) or not f["url"]):
                raise Failure("task", f"{where} ({kind}) has a file without a \"url\"")
            paths.append(f["path"])
    elif kind == "open":
        paths.append(params.get("path"))
    for p in paths:
        if not _desktop_path_ok(p):
            raise Failure("task", f"{where} ({kind}) names the path {p!r}, which is outside {HOME} and "
                                  f"/tmp or contains '..'")
    for key in ("stdout", "stderr"):
        if kind in ("execute", "command") and params.get(key) and not _cache_name_ok(params[key]):
            raise Failure("task", f"{where} ({kind}) writes its {key} to {params[key]!r}, which is not a "
                                  f"plain file name in the task's cache folder")


def _getter_configs(evaluator, key):
    value = evaluator.get(key)
    if not value:
        return []
    return [v for v in (value if isinstance(value, list) else [value])]


def _check_evaluator(osw, task):
    evaluator = task.get("evaluator")
    if not isinstance(evaluator, dict):
        raise Failure("task", "the task has no \"evaluator\" object")
    funcs = evaluator.get("func")
    if not funcs:
        raise Failure("task", "the task's evaluator has no \"func\"")
    for name in funcs if isinstance(funcs, list) else [funcs]:
        if not isinstance(name, str) or getattr(osw.metrics, name, None) is None:
            raise Failure("task", f"the task's evaluator names the unknown metric {name!r} "
                                  f"(desktop-env has no metric {name})")
    for key in ("result", "expected"):
        for i, cfg in enumerate(_getter_configs(evaluator, key)):
            if cfg is None:
                continue
            if not isinstance(cfg, dict) or not isinstance(cfg.get("type"), str):
                raise Failure("task", f"the evaluator's {key} getter {i + 1} has no \"type\"")
            if getattr(osw.getters, f"get_{cfg['type']}", None) is None:
                raise Failure("task", f"the evaluator's {key} getter {i + 1} has the unknown type "
                                      f"{cfg['type']!r} (desktop-env has no get_{cfg['type']})")
            dests = cfg.get("dest")
            for d in (dests if isinstance(dests, list) else [dests] if dests is not None else []):
                if not _cache_name_ok(d):
                    raise Failure("task", f"the evaluator's {key} getter {i + 1} ({cfg['type']}) has the "
                                          f"dest {d!r}, which is not a plain file name in the cache folder")
            if cfg["type"] == "cache_file" and not _cache_name_ok(cfg.get("path")):
                raise Failure("task", f"the evaluator's {key} getter {i + 1} (cache_file) has the path "
                                      f"{cfg.get('path')!r}, which is not a plain file name in the cache folder")


# -- The session -----------------------------------------------------------------------------
class Session:
    def __init__(self):
        self.env = None
        self.server = None

    # setup ---------------------------------------------------------------------------------
    def setup(self, req):
        osw = load_osworld()
        if osw is None:
            raise Failure("machine", f"OSWorld's code does not import in this venv: {_one_line(_IMPORT_ERROR)}",
                          _IMPORT_ERROR)
        task = req.get("task")
        if not isinstance(task, dict):
            raise Failure("task", "the setup request has no \"task\" object")
        cache_base = req.get("cache_dir")
        if not isinstance(cache_base, str) or not cache_base:
            raise Failure("machine", "the setup request has no \"cache_dir\"")
        server = req.get("server") or "http://127.0.0.1:5000"
        m = re.match(r"^http://([^/:]+):(\d+)/?$", server)
        if not m:
            raise Failure("machine", f"the server address {server!r} is not http://HOST:PORT")
        vm_ip, port = m.group(1), int(m.group(2))
        screen = req.get("screen") or [1920, 1080]
        try:
            width, height = int(screen[0]), int(screen[1])
        except (TypeError, ValueError, IndexError):
            raise Failure("machine", f"the screen size {screen!r} is not [width, height]") from None
        wait = float(req.get("wait", 60))

        task_id = task.get("id")
        if not isinstance(task_id, str) or not _TASK_ID.match(task_id) or task_id in (".", ".."):
            raise Failure("task", f"the task id {task_id!r} is not a plain name (letters, digits, . _ -)")
        if "instruction" not in task:
            raise Failure("task", "the task has no \"instruction\"")
        config = task.get("config", [])
        if not isinstance(config, list):
            raise Failure("task", "the task's \"config\" is not a list of steps")

        started = time.monotonic()
        self.env = None
        env = osw.DesktopEnv.__new__(osw.DesktopEnv)
        env.provider_name = "ufo-batch"
        env.region = None
        env.manager = env.provider = None
        env.path_to_vm = None
        env.snapshot_name = "init_state"
        env.os_type = "Ubuntu"
        env.vm_ip = vm_ip
        env.server_port = port
        env.chromium_port = int(req.get("chromium_port", 9222))
        env.vnc_port = int(req.get("vnc_port", 8006))
        env.vlc_port = int(req.get("vlc_port", 8080))
        env.screen_width, env.screen_height = width, height
        env.cache_dir_base = cache_base
        env.enable_proxy = False
        env.current_use_proxy = False
        env.client_password = "password"  # OSWorld's default outside AWS ({CLIENT_PASSWORD})
        env.headless = True
        env.require_a11y_tree = False
        env.require_terminal = False
        env.action_space = "pyautogui"
        env.instruction = None
        env._traj_no = 0
        env._step_no = 0
        env.action_history = []
        env.is_environment_used = False
        env.controller = osw.PythonController(vm_ip=vm_ip, server_port=port)
        # A missing file answers 404 at once; OSWorld's controller still retries it 3 times
        # 5 s apart. The server is local: 1 s apart is enough (scores are unchanged).
        env.controller.retry_interval = 1
        env.setup_controller = osw.SetupController(
            vm_ip=vm_ip, server_port=port, chromium_port=env.chromium_port, vlc_port=env.vlc_port,
            cache_dir=cache_base, client_password=env.client_password,
            screen_width=width, screen_height=height)

        # Check the whole task first (before waiting for the server): nothing runs for a task
        # that cannot be scored.
        _check_evaluator(osw, task)
        for i, step in enumerate(config):
            _check_step(osw, env.setup_controller, step, f"setup step {i + 1}")
        postconfig = task["evaluator"].get("postconfig", [])
        if not isinstance(postconfig, list):
            raise Failure("task", "the evaluator's \"postconfig\" is not a list of steps")
        for i, step in enumerate(postconfig):
            _check_step(osw, env.setup_controller, step, f"postconfig step {i + 1}")

        server_seconds = self._wait_for_server(osw, server, wait)
        try:
            env._set_task_info(task)
        except (AttributeError, KeyError, TypeError, AssertionError, ValueError) as e:
            raise Failure("task", f"OSWorld rejects the task's evaluator: {_one_line(e)}", e) from e
        except OSError as e:
            raise Failure("machine", f"the task's cache folder cannot be made: {_one_line(e)}", e) from e
        env.setup_controller.reset_cache_dir(env.cache_dir)
        # OSWorld's upload_file step opens its local_path relative to where it runs: the
        # task's cache folder, where the runner copied it.
        os.makedirs(env.cache_dir, exist_ok=True)
        os.chdir(env.cache_dir)

        steps = []
        for i, step in enumerate(env.config):
            where = f"setup step {i + 1} ({step['type']})"
            t0 = time.monotonic()
            try:
                ok = env.setup_controller.setup([step], False)
            except BaseException as e:  # noqa: BLE001 - classified below
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                raise classify(e.__cause__ or e, where, "setup") from e
            if ok is False:
                raise Failure("machine", f"{where}: OSWorld's server stopped answering (its /terminal check "
                                         f"failed 20 times)")
            steps.append({"type": step["type"], "seconds": round(time.monotonic() - t0, 3)})
        if env.config:
            env.is_environment_used = True
        self.env = env
        self.server = server
        return {"seconds": round(time.monotonic() - started, 3), "server_seconds": server_seconds,
                "steps": steps}

    def _wait_for_server(self, osw, server, wait):
        t0 = time.monotonic()
        last = None
        while True:
            try:
                r = osw.requests.get(server.rstrip("/") + "/platform", timeout=2)
                if r.status_code == 200:
                    return round(time.monotonic() - t0, 3)
                last = f"HTTP {r.status_code}"
            except osw.requests.exceptions.RequestException as e:
                last = _one_line(e)
            if time.monotonic() - t0 >= wait:
                raise Failure("machine", f"OSWorld's server at {server} did not answer GET /platform within "
                                         f"{wait:g} s (last: {last})")
            time.sleep(0.1)

    # evaluate ------------------------------------------------------------------------------
    def evaluate(self, req):
        env = self.env
        if env is None:
            raise Failure("machine", "evaluate came before a successful setup")
        last = req.get("last_action")
        if last is not None and not isinstance(last, str):
            raise Failure("machine", f"last_action {last!r} is not a string or null")
        env.action_history = [last] if last is not None else []
        details = []
        timing = {"postconfig": 0.0}
        originals = (env.result_getter, env.expected_getter, env.metric, env.setup_controller.setup)

        role_configs = {"result": env.evaluator.get("result"), "expected": env.evaluator.get("expected")}

        def config_for(role, index):
            cfg = role_configs[role]
            if isinstance(cfg, list):
                return cfg[index] if index is not None and index < len(cfg) else None
            return cfg

        def wrap_getter(getter, role, index):
            if getter is None:
                return None

            @functools.wraps(getter)
            def recorded(e, cfg):
                entry = {"getter": (cfg or {}).get("type") if isinstance(cfg, dict) else None, "role": role}
                if index is not None:
                    entry["index"] = index
                details.append(entry)
                t0 = time.monotonic()
                try:
                    value = getter(e, cfg)
                except FileNotFoundError as exc:
                    entry["seconds"] = round(time.monotonic() - t0, 3)
                    entry["missing"] = exc.filename or str(exc)
                    entry["raised"] = _one_line(exc)
                    raise
                except BaseException as exc:
                    entry["seconds"] = round(time.monotonic() - t0, 3)
                    entry["raised"] = _one_line(exc)
                    raise
                entry["seconds"] = round(time.monotonic() - t0, 3)
                entry["returned"] = _describe(value)
                if value is None or (isinstance(value, list) and any(v is None for v in value)):
                    paths = cfg.get("path") if isinstance(cfg, dict) else None
                    if entry["getter"] in ("vm_file", "content_from_vm_file") and paths:
                        entry["missing"] = paths
                return value
            return recorded

        def wrap_metric(metric, index):
            name = getattr(metric, "__name__", repr(metric))

            @functools.wraps(metric)
            def recorded(*args, **kwargs):
                entry = {"metric": name}
                if index is not None:
                    entry["index"] = index
                details.append(entry)
                try:
                    inspect.signature(metric).bind(*args, **kwargs)
                except TypeError as exc:
                    entry["raised"] = _one_line(exc)
                    raise Failure("task", f"the metric {name} does not take the task's arguments/options: "
                                          f"{exc}", exc) from exc
                except ValueError:
                    pass  # no signature to check
                t0 = time.monotonic()
                try:
                    value = metric(*args, **kwargs)
                except BaseException as exc:
                    entry["seconds"] = round(time.monotonic() - t0, 3)
                    entry["raised"] = _one_line(exc)
                    raise
                entry["seconds"] = round(time.monotonic() - t0, 3)
                entry["value"] = _jsonable(value) if isinstance(_jsonable(value), (bool, int, float)) \
                    or value is None else repr(value)[:200]
                return value
            return recorded

        def timed_setup(config, use_proxy=False):
            t0 = time.monotonic()
            try:
                return originals[3](config, use_proxy)
            finally:
                timing["postconfig"] += time.monotonic() - t0

        if isinstance(env.result_getter, list):
            env.result_getter = [wrap_getter(g, "result", i) for i, g in enumerate(env.result_getter)]
        else:
            env.result_getter = wrap_getter(env.result_getter, "result", None)
        if isinstance(env.expected_getter, list):
            env.expected_getter = [wrap_getter(g, "expected", i) for i, g in enumerate(env.expected_getter)]
        else:
            env.expected_getter = wrap_getter(env.expected_getter, "expected", None)
        if isinstance(env.metric, list):
            env.metric = [wrap_metric(m, i) for i, m in enumerate(env.metric)]
        else:
            env.metric = wrap_metric(env.metric, None)
        env.setup_controller.setup = timed_setup

        t0 = time.monotonic()
        try:
            score = env.evaluate()
        except BaseException as e:  # noqa: BLE001 - classified below
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            where = _evaluate_stage(details, timing)
            failure = classify(e, where, "evaluator")
            failure.details = details
            raise failure from e
        finally:
            env.result_getter, env.expected_getter, env.metric = originals[:3]
            env.setup_controller.setup = originals[3]
        seconds = time.monotonic() - t0
        for d in details:
            if "getter" in d and d.get("missing") is not None and "note" not in d:
                d["note"] = f"file not found: {d['missing']}"
        value = _score_value(score)
        if value is None:
            failure = Failure("evaluator", f"OSWorld's evaluate() returned {score!r}, which is not a number "
                                           f"in [0, 1]")
            failure.details = details
            raise failure
        return {"score": value, "seconds": round(seconds, 3),
                "postconfig_seconds": round(timing["postconfig"], 3), "details": details}


def _evaluate_stage(details, timing):
    if not details:
        return "the evaluator's postconfig" if timing["postconfig"] else "OSWorld's evaluate()"
    last = details[-1]
    if "metric" in last:
        return f"the metric {last['metric']}"
    return f"the {last.get('role', '')} getter {last.get('getter')}".replace("  ", " ")


def _score_value(score):
    if isinstance(score, bool):
        return float(score)
    if isinstance(score, numbers.Real):
        f = float(score)
    elif hasattr(score, "__float__") and not isinstance(score, str):
        try:
            f = float(score)
        except (TypeError, ValueError):
            return None
    else:
        return None
    if not math.isfinite(f) or f < 0.0 or f > 1.0:
        return None
    return f


def _describe(value, depth=0):
    """A short description of what a getter returned: a path (and whether it exists, its size),
    a short repr, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.startswith("/") and len(value) < 4096 and "\n" not in value:
            try:
                exists = os.path.exists(value)
            except (OSError, ValueError):
                exists = False
            if exists or "/" in value[1:]:
                d = {"path": value, "exists": exists}
                if exists and os.path.isfile(value):
                    d["bytes"] = os.path.getsize(value)
                return d
        return value if len(value) <= 200 else value[:197] + "..."
    if isinstance(value, (list, tuple)) and depth == 0:
        return [_describe(v, 1) for v in list(value)[:20]]
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


# -- Entry points ----------------------------------------------------------------------------
def probe():
    raw = sys.stdin.read()
    try:
        req = json.loads(raw) if raw.strip() else {}
        if not isinstance(req, dict):
            raise ValueError("not a JSON object")
    except ValueError as e:
        send({"error": f"the probe request is not a JSON object: {e}", "kind": "machine", "detail": ""})
        return 2
    osw = load_osworld()
    if osw is None:
        send({"error": f"OSWorld's code does not import in this venv: {_one_line(_IMPORT_ERROR)}",
              "kind": "machine", "detail": _detail(_IMPORT_ERROR)})
        return 2
    out = {"desktop_env": osw.version, "python": platform.python_version(),
           "setup": {}, "getters": {}, "metrics": {}}
    everything = req.get("all") is True
    for key, verdict in (("setup", verdict_setup), ("getters", verdict_getter), ("metrics", verdict_metric)):
        names = req.get(key) or []
        if not isinstance(names, list):
            names = [names]
        if everything:
            names = sorted(set(names) | set(all_names(osw, key)))
        for name in names:
            try:
                out[key][str(name)] = verdict(osw, name)
            except Exception as e:  # noqa: BLE001 - one bad name must not sink the probe
                out[key][str(name)] = {"unknown": f"the probe failed on it: {_one_line(e)}"}
    out["stubbed"] = sorted(set(STUBBED.values()))
    send(out)
    return 0


def serve():
    load_osworld()
    session = Session()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            send({"error": f"the request is not a JSON object: {e}", "kind": "machine", "detail": line[:200]})
            continue
        op = req.get("op")
        if op == "quit":
            return 0
        ident = req.get("id")
        log.info("request: %s", op)
        try:
            if op == "setup":
                answer = session.setup(req)
            elif op == "evaluate":
                answer = session.evaluate(req)
            else:
                raise Failure("machine", f"unknown op {op!r} (setup, evaluate, quit)")
            send({"id": ident, "ok": answer})
        except Failure as f:
            out = {"id": ident, "error": f.message, "kind": f.kind,
                   "detail": _detail(f.exc if f.exc else f.__cause__)}
            if getattr(f, "details", None):
                out["details"] = f.details
            log.error("%s: %s", f.kind, f.message)
            send(out)
        except Exception as e:  # noqa: BLE001 - a bug here: say so, keep serving
            log.exception("driver error")
            send({"id": ident, "error": f"the driver failed on {op}: {_one_line(e)}", "kind": "machine",
                  "detail": _detail(e)})
    return 0


def main(argv):
    if len(argv) != 2 or argv[1] not in ("probe", "serve"):
        print("usage: driver.py probe|serve", file=sys.stderr)
        return 2
    return probe() if argv[1] == "probe" else serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
