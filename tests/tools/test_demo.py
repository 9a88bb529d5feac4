"""`tfpartial demo --plot`: the drift picture, and what happens without matplotlib."""

import importlib.util
import json
import math
import os
import pathlib
import re
import struct
import subprocess
import sys
import zlib

import pytest

import processes

ROOT = pathlib.Path(__file__).parent.parent.parent
COMMITTED = ROOT / "docs" / "drift.png"
METADATA = "tfpartial-drift"  # _demo.PLOT_METADATA; read here as a user would.
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _run(*code_or_args, code=None):
  command = [sys.executable, "-c", code] if code else [
      sys.executable, "-m", "tfpartial", *code_or_args]
  return processes.run(command, timeout=600,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def png_chunks(data: bytes):
  """(type, payload) of each chunk of a PNG file; asserts the structure."""
  assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
  position, chunks = 8, []
  while position < len(data):
    length, kind = struct.unpack(">I4s", data[position:position + 8])
    payload = data[position + 8:position + 8 + length]
    crc, = struct.unpack(">I", data[position + 8 + length:position + 12 + length])
    assert zlib.crc32(kind + payload) == crc, f"bad CRC in {kind!r}"
    chunks.append((kind.decode("ascii"), payload))
    position += 12 + length
  assert chunks[0][0] == "IHDR" and chunks[-1][0] == "IEND"
  return chunks


def png_text(data: bytes) -> dict:
  """The PNG's text chunks (tEXt, zTXt, iTXt), keyword -> text."""
  texts = {}
  for kind, payload in png_chunks(data):
    if kind == "tEXt":
      key, text = payload.split(b"\0", 1)
      texts[key.decode("latin-1")] = text.decode("latin-1")
    elif kind == "zTXt":
      key, rest = payload.split(b"\0", 1)
      texts[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
    elif kind == "iTXt":
      key, rest = payload.split(b"\0", 1)
      compressed, rest = rest[0], rest[2:]
      _, rest = rest.split(b"\0", 1)  # Language tag.
      _, text = rest.split(b"\0", 1)  # Translated keyword.
      texts[key.decode("latin-1")] = (
          zlib.decompress(text) if compressed else text).decode("utf-8")
  return texts


def _drawn_numbers(path) -> dict:
  return json.loads(png_text(pathlib.Path(path).read_bytes())[METADATA])


# TensorFlow's own C++ start-up log, which TF_CPP_MIN_LOG_LEVEL does not
# silence in every release; the command's own output is the rest.
_TF_LOG = re.compile(r"^(WARNING: All log messages before absl|[IWEF]\d{4} )")


def _one_line(text):
  lines = [line for line in text.splitlines() if not _TF_LOG.match(line)]
  return len(lines) == 1 and lines[0].strip()


def test_plot_without_matplotlib_says_what_to_install_and_does_nothing(
    tmp_path):
  target = tmp_path / "drift.png"
  result = _run(code=(
      "import sys; sys.modules['matplotlib'] = None\n"  # As if not installed.
      "from tfpartial import cli\n"
      f"sys.exit(cli.main(['demo', '--plot', {str(target)!r}]))"))
  assert result.returncode == 2, result.stderr[-3000:]
  assert _one_line(result.stderr), result.stderr
  assert "pip install 'tfpartial[plot]'" in result.stderr
  assert result.stdout == ""  # Nothing ran.
  assert not target.exists()


def test_plot_into_a_missing_folder_is_bad_input_before_any_work(tmp_path):
  target = tmp_path / "nowhere" / "drift.png"
  result = _run("demo", "--plot", str(target))
  assert result.returncode == 2, result.stderr[-3000:]
  assert _one_line(result.stderr), result.stderr
  assert str(tmp_path / "nowhere") in result.stderr
  assert result.stdout == ""


def test_demo_help_offers_the_plot():
  result = _run("demo", "--help")
  assert result.returncode == 0
  assert "--plot FILE.png" in result.stdout
  assert "tfpartial[plot]" in result.stdout


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
  if not HAS_MATPLOTLIB:
    pytest.skip("matplotlib is not installed: pip install 'tfpartial[plot]'")
  target = tmp_path_factory.mktemp("plot") / "drift.png"
  result = _run("demo", "--plot", str(target))
  assert result.returncode == 0, result.stderr[-3000:]
  return target, result.stdout


def test_plot_writes_a_png_that_matplotlib_reads(drawn):
  from matplotlib import image  # pylint: disable=g-import-not-at-top
  target, out = drawn
  assert f"drawn in {target}" in out
  chunks = png_chunks(target.read_bytes())
  width, height = struct.unpack(">II", chunks[0][1][:8])
  assert (width, height) == (1300, 750)
  pixels = image.imread(target)
  assert pixels.shape[:2] == (750, 1300)
  colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[-1])[::97]}
  assert len(colours) > 20  # Lines and text, not a blank canvas.


def test_the_picture_shows_what_the_table_prints(drawn):
  target, out = drawn
  numbers = _drawn_numbers(target)
  lines = out.splitlines()
  start = next(i for i, line in enumerate(lines) if line.startswith("3. "))
  cells = lambda line: [line[i:i + 12].strip()  # Columns 12 wide after 21.
                        for i in range(21, len(line), 12)]
  header = cells(lines[start + 1])
  rows = {line[3:21].strip(): cells(line) for line in lines[start + 2:start + 6]}
  assert set(rows) == {"grads * mask", "stop_gradient mix", "shadow + assign",
                       "tfpartial"}
  assert set(numbers) == set(header)
  for column, scenario in enumerate(header):
    for name, row in rows.items():
      _, value, expected = numbers[scenario][name][-1]
      drift = abs(value - expected)
      cell = row[column]
      if cell == "NaN":
        assert math.isnan(value)
      elif cell == "held":
        assert value == expected, (scenario, name)
      else:
        assert f"{drift:.3g}" == cell, (scenario, name)
  for scenario, by_name in numbers.items():  # tfpartial is on its line.
    assert all(v == e for _, v, e in by_name["tfpartial"]), scenario
  restored = numbers["assign**"]["tfpartial"]
  assert [s for s, _, _ in restored] == [0, 1, 2, 3, 3, 4, 5, 6]
  assert restored[4][1] == 7.0


def test_the_committed_picture_is_what_the_command_draws_today(drawn):
  target, _ = drawn
  fresh, committed = _drawn_numbers(target), _drawn_numbers(COMMITTED)
  assert fresh.keys() == committed.keys()
  for scenario in fresh:
    assert fresh[scenario].keys() == committed[scenario].keys()
    for name in fresh[scenario]:
      for new, old in zip(fresh[scenario][name], committed[scenario][name],
                          strict=True):
        # Regenerate with `tfpartial demo --plot docs/drift.png`; other
        # TensorFlow releases may round the last bits differently.
        assert new[0] == old[0]
        for a, b in zip(new[1:], old[1:]):
          assert (math.isnan(a) and math.isnan(b)) or math.isclose(
              a, b, rel_tol=1e-5, abs_tol=1e-6), (scenario, name, new, old)


def test_the_footnote_names_the_keras_that_ran(drawn):
  import keras  # pylint: disable=g-import-not-at-top
  _, out = drawn
  claimed = re.findall(r"Keras (\d+)'s", out)
  assert all(major == keras.__version__.split(".")[0] for major in claimed), (
      claimed, keras.__version__)
