"""`tfpartial scan` on a package copied as a repository's root (`_renamed`),
the read of t61-pkg: a third-party head whose imports match two of the
project's files stays unresolved unless a module reached through the
head imports through it in turn (A); imports are read from the syntax
trees, never from strings (B); the work grows linearly with the number
of folders holding modules of the same name (C); a package folder wins
over a module of the same name, as in Python (D); a root script named as
the head (S3) and a star import through the head (S4).

Synthetic projects, each in the shape of real code; the sink is the
decoder of `test_scan_t61_pkg` whose table's row 0 is replaced by
zeros."""

import pytest

import scanned
from test_scan_t61_pkg import SINK, SINK_AT, UTILS, WHOLE, _icd, _model
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

TOKENIZE = "def tokenize(text):\n  return text.split()\n"


# A: a third-party head (`official`, `bert`) matching two root files.

# Two modules of an installed package, each way of importing them.
_BERT_IMPORTS = [
    "from bert import modeling\nfrom bert import tokenization\n",
    "import bert.modeling as modeling\n"
    "import bert.tokenization as tokenization\n",
]

def test_a_two_third_party_imports_matching_two_root_files():
  files = {"train.py": _model("from official.utils import decoder\n"
                              "from official.nlp import tokenize\n"),
           "utils.py": SINK, "nlp.py": TOKENIZE}
  assert scanned.in_project(files) == []


@pytest.mark.parametrize("imports", _BERT_IMPORTS)
def test_a_copied_modules_beside_their_installed_package(imports):
  files = {"run_classifier.py": _model(imports, "modeling.decoder"),
           "modeling.py": SINK, "tokenization.py": TOKENIZE}
  assert scanned.in_project(files) == []


@pytest.mark.parametrize("imports", _BERT_IMPORTS)
def test_a_the_same_when_a_module_reached_imports_through_the_head(
    imports):
  # Twin: `tokenization.py`, reached as `bert.tokenization`, imports
  # `bert.modeling` itself: the package refers to itself.
  files = {"run_classifier.py": _model(imports, "modeling.decoder"),
           "modeling.py": SINK,
           "tokenization.py": "from bert.modeling import decoder\n\n"
                              + TOKENIZE}
  assert scanned.in_project(files) == [
      ("stop-gradient-mix", "modeling.py", 6)]


def test_a_the_copied_package_importing_itself_is_followed():
  files = _icd("from icd.modules import decoder\n")
  assert scanned.in_project(files) == [SINK_AT]


# B: imports written in strings never count.

def test_b_an_import_in_a_docstring_is_no_evidence():
  # `networks.py` is named through `icd` only in `train.py`'s docstring.
  files = _icd("from icd.modules import decoder\n")
  files["train.py"] = (
      '"""Usage:\n\n    from icd.networks import Model\n"""\n'
      "from networks import Model\n\nmodel = Model(None, None)\n")
  assert scanned.in_project(files) == []


def test_b_the_same_import_written_as_code_is_evidence():
  # Twin: the import the docstring shows, made.
  files = _icd("from icd.modules import decoder\n")
  files["train.py"] = (
      "from icd.networks import Model\n\nmodel = Model(None, None)\n")
  assert scanned.in_project(files) == [SINK_AT]


def test_b_an_import_in_a_docstring_is_no_counter_evidence():
  files = _icd("from icd.modules import decoder\n")
  files["networks.py"] = (
      '"""Was:\n\nfrom icd.lib.old_modules import decoder\n"""\n'
      + files["networks.py"])
  assert scanned.in_project(files) == [SINK_AT]


# C: the roots' cost at N and 4N folders sharing module names.

def _utils_folders(n):
  """`n` folders each with its own `utils.py` (a sink) and a `train.py`
  importing it through a third-party head."""
  files = {}
  for i in range(n):
    files[f"exp{i}/utils.py"] = SINK
    files[f"exp{i}/train.py"] = _model("from official.utils import decoder\n")
  return files


def _icd_folders(n):
  """`n` folders each holding a copy of the package (two roots fit: the
  head stays unresolved)."""
  files = {}
  for i in range(n):
    files.update(_icd("from icd.modules import decoder\n",
                      prefix=f"copy{i}/"))
  return files


@pytest.mark.parametrize("make", [_utils_folders, _icd_folders])
def test_c_the_roots_cost_grows_linearly_with_the_folders(make):
  work = []
  for n in (10, 40):
    sources = [_files.Source(p, t) for p, t in make(n).items()]
    calls, (findings, errors) = scanned.calls_made(
        lambda s=sources: _scan.scan_project(s), "_renamed.py")
    assert not errors and not [
        f for f in findings if f.idiom == "stop-gradient-mix"
        and "utils" not in f.path and "copy" not in f.path], findings
    work.append(calls)
  assert work[1] <= 4.5 * work[0], work


# D: a package folder and a module of the same name.

def _nlp(**more):
  files = _icd("from icd.nlp import decoder\n")
  del files["modules.py"]
  files["nlp.py"] = SINK
  files.update(more)
  return files


def test_d_the_package_wins_over_the_module_of_the_same_name():
  # `icd.nlp` is `nlp/__init__.py` (its decoder reads its whole table).
  assert scanned.in_project(_nlp(**{"nlp/__init__.py": WHOLE})) == []


def test_d_the_module_alone_is_followed():
  # Twin: no folder `nlp/`.
  assert scanned.in_project(_nlp()) == [
      ("stop-gradient-mix", "nlp.py", 6)]


# S3, S4.

def test_s3_a_root_script_named_as_the_head():
  files = _icd("from icd.modules import decoder\n")
  files["icd.py"] = files.pop("train.py")
  assert scanned.in_project(files) == [SINK_AT]


def test_s4_a_star_import_through_the_head_is_evidence():
  # `icd.networks` and, through the star, `icd.modules`: two modules.
  files = _icd("from icd.modules import *\n")
  files["train.py"] = (
      "from icd.networks import Model\n\nmodel = Model(None, None)\n")
  assert scanned.in_project(files) == [SINK_AT]
