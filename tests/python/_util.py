"""Tiny test harness shared by tests/python/test_*.py.

Each test file is a script: it records checks in a Results object and exits
with Results.finish(): 0 when nothing failed, 1 when something failed or
nothing ran, 77 when every check skipped (ctest shows that file as Skipped).
Skipped checks are reported as skipped and never counted as passed.
"""

import os
import sys
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))
_BINDING = os.path.join(_REPO, "bindings", "python")
if _BINDING not in sys.path:
    sys.path.insert(0, _BINDING)


def import_stridemem():
    """Import the binding or exit(1) saying why (a missing library is a failure)."""
    try:
        import stridemem
    except Exception as e:  # ImportError, OSError, version mismatch
        print("FAIL: cannot import stridemem: %s" % e)
        print("0 passed, 1 failed")
        sys.exit(1)
    return stridemem


def stridemem_gpu_unusable(sm, device="cuda:0"):
    """Why the stridemem module sm cannot use a CUDA device (None: it can):
    the library's device count, then a real allocation there."""
    if sm.cuda_device_count() <= 0:
        return ("sm_cuda_device_count() == 0 (a CPU-only build of %s, or no usable GPU)"
                % os.environ.get("STRIDEMEM_LIB", "the library"))
    try:
        sm.zeros(1, device=device).close()
    except sm.StrideMemError as e:
        return str(e)
    return None


def _exc_name(exc):
    if isinstance(exc, tuple):
        return " or ".join(e.__name__ for e in exc)
    return exc.__name__


class Results(object):
    def __init__(self, name, max_reports=40):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.max_reports = max_reports
        self.reports = 0

    def report(self, text):
        if self.reports < self.max_reports:
            print(text)
        elif self.reports == self.max_reports:
            print("... (further failure reports suppressed)")
        self.reports += 1

    def ok(self, what=""):
        self.passed += 1

    def fail(self, what):
        self.failed += 1
        self.report("FAIL: %s" % what)

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.fail(what)
        return bool(cond)

    def equal(self, got, want, what):
        return self.check(got == want, "%s: got %r, want %r" % (what, got, want))

    def skip(self, what, why):
        self.skipped += 1
        print("SKIP: %s: %s" % (what, why))

    def raises(self, status, fn, what, mentions=()):
        """fn() must raise StrideMemError with this status and a message that
        is non-empty and mentions each string of `mentions`."""
        import stridemem
        try:
            fn()
        except stridemem.StrideMemError as e:
            good = e.status == status
            self.check(good, "%s: status %s, want %s (%s)"
                       % (what, e.status_name, stridemem.STATUS_NAMES.get(status, status),
                          e.message))
            self.check(bool(e.message), "%s: empty sm_last_error message" % what)
            for m in mentions:
                self.check(str(m).lower() in e.message.lower(),
                           "%s: message %r does not mention %r" % (what, e.message, m))
            return e
        except Exception as e:
            self.fail("%s: raised %s: %s, want StrideMemError %s"
                      % (what, type(e).__name__, e, stridemem.STATUS_NAMES.get(status)))
            return None
        self.fail("%s: succeeded, want %s" % (what, stridemem.STATUS_NAMES.get(status)))
        return None

    def raises_exc(self, exc, fn, what, mentions=(), absent=(), ignore_case=False):
        """fn() must raise exc (a class or a tuple of them) with a message that
        mentions each of `mentions` and none of `absent`; returns the exception,
        or None after counting a failure."""
        try:
            fn()
        except exc as e:
            text = str(e).lower() if ignore_case else str(e)
            for m in mentions:
                m = str(m).lower() if ignore_case else str(m)
                self.check(m in text, "%s: %r does not mention %r" % (what, str(e), m))
            for m in absent:
                m = str(m).lower() if ignore_case else str(m)
                self.check(m not in text, "%s: %r mentions %r" % (what, str(e), m))
            self.ok()
            return e
        except Exception as e:
            self.fail("%s: raised %s: %s, want %s" % (what, type(e).__name__, e, _exc_name(exc)))
            return None
        self.fail("%s: nothing raised, want %s" % (what, _exc_name(exc)))
        return None

    def run(self, name, fn, *args):
        """Run one test function; an unexpected exception is one failure."""
        try:
            fn(*args)
        except Exception:
            self.fail("%s raised:\n%s" % (name, traceback.format_exc()))

    def finish(self):
        """0: passed; 1: a failure, or nothing ran; 77: every check skipped
        (ctest's SKIP_RETURN_CODE for these files: shown as Skipped, never
        as Passed). A file that skipped in part passes, and its counted line
        above is what scripts/skip_report.py lists after the run."""
        print("%s: %d passed, %d failed, %d skipped"
              % (self.name, self.passed, self.failed, self.skipped))
        if self.failed:
            return 1
        if self.passed == 0:
            return 77 if self.skipped else 1
        return 0


class Checklist(object):
    """The GPU session's check scripts (dlpack_gpu_check, python_cuda_check):
    one PASS / FAIL / NOT RUN line per check, printed as it happens and kept
    in order for --json. finish() prints the counts and gives the exit
    code: 0 only if nothing failed and something passed."""

    def __init__(self, name):
        self.name = name
        self.results = []  # [name, "PASS" | "FAIL" | "NOT RUN", detail]

    def record(self, name, status, detail=""):
        self.results.append((name, status, detail))
        print("%-7s %s%s" % (status, name, (": " + detail) if detail else ""))
        sys.stdout.flush()

    def check(self, cond, name, detail=""):
        self.record(name, "PASS" if cond else "FAIL", "" if cond else detail)
        return bool(cond)

    def finish(self, label=None):
        n = {s: sum(1 for r in self.results if r[1] == s) for s in ("PASS", "FAIL", "NOT RUN")}
        print("%s: %d passed, %d failed, %d not run"
              % (label or self.name, n["PASS"], n["FAIL"], n["NOT RUN"]))
        return 1 if n["FAIL"] or not n["PASS"] else 0


class Failure(Exception):
    """A failed expectation of a Cases test function."""


def expect(cond, msg, output=""):
    """Fails the running case with msg, plus the output of the program under test."""
    if not cond:
        raise Failure(msg + ("\n--- checker output ---\n" + output if output else ""))


class NotRun(Exception):
    """A Cases test function that cannot run on this machine for a reason
    the caller declared (an opt-out such as STRIDEMEM_NO_BROWSER): counted
    as not run, never as passed."""


class Cases(object):
    """Test functions registered with @cases.case and run in order by run():
    each passes or fails (a Failure or any crash is a failure, never a skip);
    one that raises NotRun is neither: a "NOT RUN" line, counted apart.
    run() prints one line per case and the counts ("name: P passed, F
    failed, N not run" when a name is given and something was not run, the
    form scripts/skip_report.py reads), and gives the exit code: 1 on a
    failure, 0 when something passed, 77 when everything was not run."""

    def __init__(self, name=None):
        self.functions = []
        self.name = name

    def case(self, fn):
        self.functions.append(fn)
        return fn

    def run(self):
        passed = failed = not_run = 0
        for fn in self.functions:
            try:
                fn()
            except NotRun as e:
                not_run += 1
                print("NOT RUN %s: %s" % (fn.__name__, e))
            except Failure as e:
                failed += 1
                print("FAIL %s: %s" % (fn.__name__, e))
            except Exception as e:
                failed += 1
                print("FAIL %s: %s: %s" % (fn.__name__, type(e).__name__, e))
            else:
                passed += 1
                print("ok   %s" % fn.__name__)
        counts = "%d passed, %d failed" % (passed, failed)
        if not_run:
            counts += ", %d not run" % not_run
        print("%s%s" % (self.name + ": " if self.name and not_run else "", counts))
        if failed:
            return 1
        return 0 if passed else 77 if not_run else 1


class CapsuleHolder(object):
    """Hands a DLPack capsule made beforehand (with our own options) to a
    consumer such as numpy.from_dlpack, which wants an object with
    __dlpack__ and __dlpack_device__."""

    def __init__(self, cap, device=(1, 0)):
        self.cap, self.device = cap, device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.cap

    def __dlpack_device__(self):
        return self.device
