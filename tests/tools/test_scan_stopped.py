"""`tfpartial scan` on code whose shape no test had: a step helper called
from a lambda inside a lambda (a PGD attack's `tf.while_loop` body, as
real adversarial-training code writes it) once stopped the whole scan
with a `TypeError`: a lambda's body is one expression, not statements.
And when one idiom stops on code it never saw, the others still report,
the stop is one line naming the idiom, and the exit status is 2, with
`--exit-zero` too."""

import io
import json
import textwrap

import pytest

from tfpartial._tools.scan import _gate
from tfpartial._tools.scan import _main
from tfpartial._tools.scan import _scan

ATTACK = """\
    import tensorflow as tf
    from tensorflow.contrib.compiler import xla


    def attack(model, image):
      def one_step_attack(adv):
        loss = tf.reduce_sum(model(adv))
        g, = tf.gradients(loss, adv)
        return adv - 0.01 * tf.sign(g)

      return tf.while_loop(
          lambda _: True,
          lambda adv: xla.compile(lambda: one_step_attack(adv))[0],
          [image], maximum_iterations=10)
    """

MASKED = """\
    grads = tape.gradient(loss, weights)
    masked = []
    for g, m in zip(grads, masks):
      masked.append(tf.math.multiply(g, m))
    opt.apply_gradients(zip(masked, weights))
    """


def _run(tmp_path, files, exit_zero=False):
  for name, text in files.items():
    (tmp_path / name).write_text(textwrap.dedent(text))
  out, err = io.StringIO(), io.StringIO()
  status = _main.run([str(tmp_path)], form="json", out=out, err=err,
                     gate=_gate.Options(exit_zero=exit_zero))
  return status, out.getvalue(), err.getvalue()


def test_a_step_helper_called_from_a_lambda_in_a_lambda(tmp_path):
  status, out, err = _run(tmp_path, {"attack.py": ATTACK})
  assert (status, out.strip(), "error" in err) == (0, "[]", False), err


@pytest.mark.parametrize("exit_zero", [False, True])
@pytest.mark.parametrize("stopping", ["var-list-filter", "grads-mask"])
def test_one_idiom_that_stops_costs_only_its_own_findings(
    tmp_path, monkeypatch, stopping, exit_zero):
  def stops(analysis):
    raise KeyError("no such scope")

  idiom = next(i for i in _scan.IDIOMS if i.id == stopping)
  monkeypatch.setattr(idiom, "detect", stops)
  status, out, err = _run(tmp_path, {"a.py": MASKED}, exit_zero)
  lines = [line for line in err.splitlines() if "stopped" in line]
  assert status == 2
  assert len(lines) == 1 and lines[0].startswith(
      f"tfpartial scan: error: {stopping} stopped on this project "
      "(KeyError: 'no such scope')"), err
  expected = [] if stopping == "grads-mask" else ["grads-mask"]
  assert [f["idiom"] for f in json.loads(out)] == expected
