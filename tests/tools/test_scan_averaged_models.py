"""`tfpartial scan` on a model set to an average of two live models'
weights (part twenty-nine's negatives: a mean teacher updated by a
method the train step calls, an EMA model updated by a helper in another
module): the written values are computed from the trained model's
weights as they are now, into another model object, nothing saved is put
back; not a `write-back`. Beside each, the look-alikes that must still be
found: a pretrained model's weights put back into the elements a mask
chooses, a copy of the model itself taken before training and blended
back under a mask."""

import pytest

import scanned


_found = scanned.in_project

_MEAN_TEACHER = """\
    import tensorflow as tf
    class MeanTeacher:
        def __init__(self, student, teacher, opt, alpha):
            self._student = student
            self._teacher = teacher
            self._opt = opt
            self.alpha = alpha

        def _update_teacher(self):
            student_weights = self._student.get_weights()
            teacher_weights = self._teacher.get_weights()
            new = []
            for (s, t) in zip(student_weights, teacher_weights):
                {assigned}new.append({mix})
            self._teacher.set_weights(new)

        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self._student(x) - y) ** 2)
            self._opt.minimize(loss, self._student.trainable_variables, tape=tape)
            self._update_teacher()
            return loss
    """


_MIXED = "new_t = self.alpha * t + (1 - self.alpha) * s; "


@pytest.mark.parametrize("assigned, mix, expected", [
    ("", "self.alpha * t + (1 - self.alpha) * s", []),
    ("", "(t + s) / 2.0", []),
    # Mixed under a name of the loop's body, then added.
    (_MIXED, "new_t", []),
    # A slice of the student's weights chosen: not an average of all.
    ("", "self.alpha * t[:4] + (1 - self.alpha) * s[:4]",
     [("write-back", "t.py", 15)]),
    (_MIXED.replace("* s;", "* s[:4];"), "new_t",
     [("write-back", "t.py", 15)]),
])
def test_a_mean_teacher_updated_after_the_step(assigned, mix, expected):
  assert _found(_MEAN_TEACHER.format(assigned=assigned, mix=mix)) == expected


_EMA_HELPER = """\
    def update_ema_weights(ema_model, student_model, decay):
        new_weights = []
        for curr, new in zip(ema_model.get_weights(), student_model.get_weights()):
            new_weights.append(curr * (1 - decay) + new * decay)
        ema_model.set_weights(new_weights)
    """

_EMA_LOOP = """\
    import tensorflow as tf
    import util
    def train(student, ema_model, data, opt):
        for step, (x, y) in enumerate(data):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((student(x) - y) ** 2)
            grads = tape.gradient(loss, student.trainable_variables)
            opt.apply_gradients(zip(grads, student.trainable_variables))
            util.update_ema_weights(ema_model, student, 0.99)
    """


def test_an_ema_model_updated_by_a_helper_of_another_module():
  assert _found({"util.py": _EMA_HELPER, "train.py": _EMA_LOOP}) == []


def test_an_ema_model_updated_by_a_comprehension():
  helper = """\
    def update_ema_weights(ema_model, student_model, decay):
        ema_model.set_weights([e * decay + w * (1 - decay) for e, w in zip(
            ema_model.get_weights(), student_model.get_weights())])
    """
  assert _found({"util.py": helper, "train.py": _EMA_LOOP}) == []


_PUT_BACK = """\
    import numpy as np
    import tensorflow as tf
    def train(model, pre, data, opt, masks):
        saved = model.get_weights()
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            new = []
            {loop}
            model.set_weights(new)
    """


@pytest.mark.parametrize("loop, expected", [
    # A pretrained model's weights put back where the mask says.
    ("for p, w, m in zip(pre.get_weights(), model.get_weights(), masks):\n"
     "                new.append(np.where(m, p, w))", [("write-back", "t.py", 13)]),
    # The model's own weights, saved before training, blended back.
    ("for s, w, m in zip(saved, model.get_weights(), masks):\n"
     "                new.append(s * m + w * (1 - m))",
     [("weight-remask", "t.py", 13)]),
    # Saved before training and averaged back: a copy taken earlier, not
    # a second live model.
    ("for s, w in zip(saved, model.get_weights()):\n"
     "                new.append(0.5 * s + 0.5 * w)", [("write-back", "t.py", 13)]),
])
def test_saved_values_put_back_are_still_found(loop, expected):
  assert _found(_PUT_BACK.format(loop=loop)) == expected
