"""`tfpartial scan`'s `_pinned` (a whole variable a step trains, set back
to a number after it) counts a method as a pass of the training loop when
a loop calls it on an instance of its class made in the same scope
(`trainer = Trainer(model)`, then `for x in data: trainer.step(x)`), as
it counts `self.step(x)` in a loop of its class. The twins stay silent: a
method run once (`trainer.step(x)` outside any loop), and a loop calling
a method of the same name on an object of another class. Synthetic
sources in the shape of real code."""

import pytest
import scanned

_TRAINER = """\
    import tensorflow as tf


    class Trainer:

        def __init__(self):
            self.t0 = tf.Variable(1.56)
            self.w = tf.Variable(tf.zeros([3]))
            self.opt = tf.keras.optimizers.Adam()

        def step(self, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(self.w * x) * self.t0
            grads = tape.gradient(loss, [self.w, self.t0])
            self.opt.apply_gradients(zip(grads, [self.w, self.t0]))
            self.t0.assign(1.56)


    class Evaluator:

        def step(self, x):
            return x


    def main(data):
{main}
    """


def _found(main):
  return scanned.found(_TRAINER.format(main="\n".join(
      "    " + line for line in main.splitlines())))


_FOUND = [("weight-remask", 16)]


@pytest.mark.parametrize("main, expected", [
    # An instance of the class, its step called in the loop: each pass.
    ("    trainer = Trainer()\n"
     "    for x in data:\n"
     "        trainer.step(x)", _FOUND),
    ("    trainer = Trainer()\n"
     "    while True:\n"
     "        trainer.step(next(data))", _FOUND),
    # Run once: the write is a start value.
    ("    trainer = Trainer()\n"
     "    trainer.step(data[0])", []),
    # Another class's method of the same name in the loop.
    ("    trainer = Trainer()\n"
     "    evaluator = Evaluator()\n"
     "    trainer.step(data[0])\n"
     "    for x in data:\n"
     "        evaluator.step(x)", []),
    # The name bound to another class in this scope.
    ("    trainer = Evaluator()\n"
     "    for x in data:\n"
     "        trainer.step(x)", []),
])
def test_a_method_run_per_pass_through_an_instance(main, expected):
  assert _found(main) == expected


def _at_module(lines):
  head = _TRAINER.split("    def main(data):")[0]
  return scanned.found(head + "".join("    " + line + "\n" for line in lines))


@pytest.mark.parametrize("lines, expected", [
    # A script's loop at the module's top level.
    (["trainer = Trainer()", "for x in data:", "    trainer.step(x)"],
     _FOUND),
    (["trainer = Trainer()", "trainer.step(data[0])"], []),
    (["trainer = Evaluator()", "for x in data:", "    trainer.step(x)"], []),
    (["trainer = Trainer()", "trainer = Evaluator()", "for x in data:",
      "    trainer.step(x)"], []),
])
def test_a_script_loop_runs_the_method_per_pass(lines, expected):
  assert _at_module(lines) == expected
