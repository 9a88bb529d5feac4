"""`tfpartial scan`'s parts of one object (`_object_parts`): a pipeline of
networks held as the attributes of one object (a camera network feeding
a detector), whose step trains a list the constructor builds from the
detector's variables and adds the camera's only under a flag some
construction leaves off, while the loss flows through the camera into
the detector: the camera stays fixed. Each positive has a silent twin,
and each must-fix of the read of t60-lists37 (rd-lists37.md, M1-M6, M9)
is answered by a case here. Self-written projects, no fetched code."""

import textwrap

import scanned

# The parts: two small Keras networks wrapped by a class of the project.
_MODELS = """\
    import tensorflow as tf

    class Part(object):
      def __init__(self, width):
        self.net = tf.keras.Sequential([tf.keras.layers.Dense(width)])

      @property
      def parameters(self):
        return self.net.trainable_variables

      def process(self, x):
        return self.net(x)

      def load_model(self, dirname):
        self.net = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    """

# The workflow: the camera's output runs through the detector in
# `run`, and the step trains `self._parameters`.
_FLOW = """\
    import tensorflow as tf
    from models import Part

    class Workflow(object):
      def __init__(self, width, trainable=None):
        self.camera = Part(width)
        self.detector = Part(2)
        self._parameters = []
        self._parameters.extend(self.detector.parameters)
        if 'camera' in trainable:
          self._parameters.extend(self.camera.parameters)
        self._optimizer = tf.keras.optimizers.Adam()

{RUN}

      def training_step(self, x, labels):
        with tf.GradientTape() as tape:
          probs = self.run(x)
          loss = tf.reduce_mean(tf.square(probs - labels))
        grads = tape.gradient(loss, self._parameters)
        self._optimizer.apply_gradients(zip(grads, self._parameters))
        return loss
{MORE}
    """

_RUN = """\
      def run(self, x):
        y = self.camera.process(x)
        return self.detector.process(y)
"""

_TRAIN = """\
    import argparse
    from flow import Workflow

    parser = argparse.ArgumentParser()
    parser.add_argument('--train', action='append')
    args = parser.parse_args()
    workflow = Workflow(4, trainable=args.train)
    for x, labels in []:
      workflow.training_step(x, labels)
    """


def _project(run=_RUN, more="", train=_TRAIN, flow=_FLOW):
  text = flow.replace("{RUN}", "    #").replace("{MORE}", "    #")
  text = textwrap.dedent(text).replace(
      "#\n", textwrap.indent(textwrap.dedent(run), "  "), 1).replace(
          "#\n", textwrap.indent(textwrap.dedent(more), "  "), 1)
  return {"models.py": _MODELS, "flow.py": text, "train.py": train}


def _line(text, needle):
  return next(i for i, line in enumerate(text.splitlines(), 1)
              if needle in line)


def _findings(files):
  return [f for f in scanned.in_project(files) if f[1] == "flow.py"]


def _flag_line(files):
  return _line(files["flow.py"], "if 'camera' in trainable")


def test_a_part_left_out_by_a_flag_the_run_leaves_off_is_found():
  """The instance's form: the script passes the flag's value from the
  command line (`action='append'`, no default), so a run without
  arguments leaves the camera out while the loss flows through it into
  the detector. Reported at the flag's `if`."""
  files = _project()
  assert _findings(files) == [("var-list-filter", "flow.py",
                               _flag_line(files))]


def test_the_finding_names_the_list_the_part_and_the_trained_part():
  """The message names the list (not the call), the left-out part and
  the part its output flows into; it claims no pretrained weights (the
  rule does not decide that by a method's name)."""
  from tfpartial._tools.scan import _files, _scan
  files = _project()
  sources = [_files.Source(p, textwrap.dedent(t)) for p, t in files.items()]
  findings, _ = _scan.scan_project(sources)
  found = [f for f in findings if f.path == "flow.py"]
  assert len(found) == 1
  text = found[0].message
  assert "`self._parameters`" in text and "`self.camera`" in text
  assert "`self.detector`" in text and "pretrained" not in text


def test_a_keras_part_called_directly_and_a_default_left_off():
  """S1 of the read: parts called directly (`self.camera(x)`), their
  variables `trainable_variables`, and no construction passing the flag
  (its default None holds it off)."""
  flow = """\
    import tensorflow as tf

    class Workflow(object):
      def __init__(self, trainable=None):
        self.camera = tf.keras.Sequential([tf.keras.layers.Dense(4)])
        self.detector = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        self._parameters = list(self.detector.trainable_variables)
        if 'camera' in trainable:
          self._parameters += self.camera.trainable_variables
        self._optimizer = tf.keras.optimizers.Adam()

      def training_step(self, x, labels):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(self.detector(self.camera(x)) - labels)
        grads = tape.gradient(loss, self._parameters)
        self._optimizer.apply_gradients(zip(grads, self._parameters))
    """
  train = """\
    from flow import Workflow
    workflow = Workflow()
    for x, labels in []:
      workflow.training_step(x, labels)
    """
  files = {"flow.py": flow, "train.py": train}
  assert _findings(files) == [("var-list-filter", "flow.py",
                               _flag_line(files))]


def test_every_part_in_the_list_is_silent():
  """Twin: the camera's variables added always: everything trains."""
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "if 'camera' in trainable:\n      ", "")
  assert "if 'camera'" not in files["flow.py"]
  assert _findings(files) == []


def test_a_flag_every_construction_turns_on_is_silent():
  """M4 of the read: the only construction passes `['camera']`."""
  files = _project(train=_TRAIN.replace("trainable=args.train",
                                        "trainable=['camera']"))
  assert _findings(files) == []


def test_a_flag_a_construction_turns_off_by_a_literal_is_found():
  """Beside M4: a construction passing `['detector']` leaves it off."""
  files = _project(train=_TRAIN.replace("trainable=args.train",
                                        "trainable=['detector']"))
  assert _findings(files) == [("var-list-filter", "flow.py",
                               _flag_line(files))]


def test_another_step_over_a_local_list_trains_the_part():
  """M1 of the read (probe 1): `camera_step` trains the camera over a
  local `cam_vars`, run every iteration."""
  more = """\
    def camera_step(self, x, target):
      cam_vars = self.camera.parameters
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(self.camera.process(x) - target))
      grads = tape.gradient(loss, cam_vars)
      self._optimizer.apply_gradients(zip(grads, cam_vars))
    """
  assert _findings(_project(more=more)) == []


def test_a_joint_step_over_an_attribute_assigned_whole_is_silent():
  """M1 of the read (probe 2): `joint_step` trains `self._everything`,
  assigned whole from both parts."""
  more = """\
    def joint_step(self, x, labels):
      self._everything = self.camera.parameters + self.detector.parameters
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(self.run(x) - labels)
      grads = tape.gradient(loss, self._everything)
      self._optimizer.apply_gradients(zip(grads, self._everything))
    """
  assert _findings(_project(more=more)) == []


def test_a_step_over_the_whole_objects_variables_is_silent():
  """M2 of the read (probe 7): a Keras workflow whose other step trains
  `self.trainable_variables`."""
  more = """\
    def joint_step(self, x, labels):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(self.run(x) - labels)
      grads = tape.gradient(loss, self.trainable_variables)
      self._optimizer.apply_gradients(zip(grads, self.trainable_variables))
    """
  files = _project(more=more)
  files["flow.py"] = files["flow.py"].replace(
      "class Workflow(object)", "class Workflow(tf.keras.Model)")
  assert _findings(files) == []


def test_a_step_of_a_base_class_trains_the_part():
  """M3 of the read (probe 19): the camera's step sits in a base class."""
  base = """\
    import tensorflow as tf

    class CameraTrainer(object):
      def camera_step(self, x, target):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(self.camera.process(x) - target)
        grads = tape.gradient(loss, self.camera.parameters)
        self._optimizer.apply_gradients(zip(grads, self.camera.parameters))
    """
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "from models import Part", "from models import Part\n"
      "from trainer import CameraTrainer").replace(
          "class Workflow(object)", "class Workflow(CameraTrainer)")
  files["trainer.py"] = base
  assert _findings(files) == []


def test_the_part_trains_itself_through_its_own_step():
  """M3 of the read (probe 3): the part's class has its own step, and the
  loop runs it through the workflow's attribute."""
  models = _MODELS + textwrap.indent(textwrap.dedent("""\

      def fit_step(self, x, target):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(self.process(x) - target)
        grads = tape.gradient(loss, self.parameters)
        tf.keras.optimizers.Adam().apply_gradients(
            zip(grads, self.parameters))
    """), "      ")
  train = _TRAIN.rstrip(" ") + "      workflow.camera.fit_step(x, labels)\n"
  files = _project(train=train)
  files["models.py"] = models
  assert _findings(files) == []


def test_a_rebound_name_does_not_make_a_teacher_feed_the_trained_part():
  """M6 of the read (probe 6): distillation. The camera's output reaches
  only the loss (soft targets); `y` is rebound to the student's output
  before the detector reads it."""
  run = """\
  def run(self, x):
    y = self.camera.process(x)
    self.soft = tf.nn.softmax(y)
    y = self.student.process(x)
    return self.detector.process(y)
"""
  files = _project(run=run)
  files["flow.py"] = files["flow.py"].replace(
      "self.detector = Part(2)\n",
      "self.detector = Part(2)\n    self.student = Part(4)\n").replace(
          "self._parameters.extend(self.detector.parameters)\n",
          "self._parameters.extend(self.detector.parameters)\n"
          "    self._parameters.extend(self.student.parameters)\n")
  assert _findings(files) == []


def test_the_part_only_on_the_inputs_under_stop_gradient_is_silent():
  """Twin: the camera's output cut by `tf.stop_gradient` before the
  detector reads it."""
  run = """\
  def run(self, x):
    y = tf.stop_gradient(self.camera.process(x))
    return self.detector.process(y)
"""
  assert _findings(_project(run=run)) == []


def test_the_part_only_in_an_evaluation_is_silent():
  """Twin: the step runs the detector alone; the camera runs only in an
  evaluation method."""
  run = """\
  def run(self, x):
    return self.detector.process(x)

  def evaluate(self, x):
    return self.detector.process(self.camera.process(x))
"""
  assert _findings(_project(run=run)) == []


def test_a_part_beside_the_trained_one_not_into_it_is_silent():
  """Twin: the camera's output reaches the loss beside the detector's,
  not through it (two heads added): no gradient through the camera into
  a trained part."""
  run = """\
  def run(self, x):
    return self.detector.process(x) + self.camera.process(x)
"""
  assert _findings(_project(run=run)) == []


def test_two_halves_of_a_gan_are_silent():
  """Twin: a GAN of two parts, each trained by its own step over its own
  list."""
  more = """\
    def generator_step(self, x):
      gen_vars = self.camera.parameters
      with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(self.detector.process(self.camera.process(x)))
      grads = tape.gradient(loss, gen_vars)
      self._optimizer.apply_gradients(zip(grads, gen_vars))
    """
  assert _findings(_project(more=more)) == []


def test_an_unlisted_object_holding_no_variables_is_silent():
  """M5 of the read (probe 17): an embedder loaded from a file feeds the
  trained head, but no list ever takes variables from it."""
  flow = """\
    import tensorflow as tf
    import fasttext

    class Classifier(object):
      def __init__(self, path):
        self.embedder = fasttext.load_model(path)
        self.head = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        self._parameters = []
        self._parameters.extend(self.head.trainable_variables)
        self._optimizer = tf.keras.optimizers.Adam()

      def training_step(self, words, labels):
        with tf.GradientTape() as tape:
          vectors = tf.constant(self.embedder.get_word_vector(words))
          loss = tf.reduce_mean(self.head(vectors) - labels)
        grads = tape.gradient(loss, self._parameters)
        self._optimizer.apply_gradients(zip(grads, self._parameters))
    """
  train = """\
    from flow import Classifier
    Classifier('model.bin').training_step([], [])
    """
  assert _findings({"flow.py": flow, "train.py": train}) == []


def _steps(n):
  """One class with `n` steps, each over its own list built in place
  from its own part (the read's M9 probe: steps per class)."""
  parts = "".join(f"    self.p{i} = tf.keras.layers.Dense(2)\n"
                  f"    self.l{i} = []\n"
                  f"    self.l{i}.extend(self.p{i}.trainable_variables)\n"
                  for i in range(n))
  steps = "".join(f"""
  def step{i}(self, x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(self.p{i}(x))
    grads = tape.gradient(loss, self.l{i})
    self.opt.apply_gradients(zip(grads, self.l{i}))
""" for i in range(n))
  return ("import tensorflow as tf\n\n\nclass Net(object):\n"
          "  def __init__(self):\n    self.opt = None\n" + parts + steps)


def _flagged(n):
  """One class with `n` flagged parts in a chain through `n` methods, one
  step: each method's flow is read once, however many parts ask."""
  parts = "".join(f"    self.p{i} = tf.keras.layers.Dense(2)\n"
                  f"    if 'p{i}' in trainable:\n"
                  f"      self.l.extend(self.p{i}.trainable_variables)\n"
                  for i in range(1, n))
  runs = "".join(f"""
  def run{i}(self, x):
    return self.p{i}(self.run{i - 1}(x))
""" for i in range(1, n))
  return ("import tensorflow as tf\n\n\nclass Net(object):\n"
          "  def __init__(self, trainable=None):\n"
          "    self.p0 = tf.keras.layers.Dense(2)\n    self.l = []\n"
          "    self.l.extend(self.p0.trainable_variables)\n" + parts +
          "    self.opt = None\n\n  def run0(self, x):\n"
          "    return self.p0(x)\n" + runs + f"""
  def step(self, x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(self.p0(self.run{n - 1}(x)))
    grads = tape.gradient(loss, self.l)
    self.opt.apply_gradients(zip(grads, self.l))
""")


def test_steps_per_class_cost_linear_work():
  """M9 of the read: four times the steps in one class, at most about
  four times the work of `_object_parts`."""
  small, large = (scanned.scan_work(_steps(n), "_object_parts.py")
                  for n in (10, 40))
  assert 0 < small and large <= 5 * small, (small, large)


def test_flagged_parts_in_a_chain_cost_linear_work():
  """Four times the flagged parts and the methods they run through, at
  most about four times the work of `_object_parts` (each method's
  flow summarised once)."""
  small, large = (scanned.scan_work(_flagged(n), "_object_parts.py")
                  for n in (10, 40))
  assert 0 < small and large <= 5 * small, (small, large)


def test_the_chain_is_found():
  """The cost fixture is itself a positive: `p1` feeds `p0` through the
  chain and is left out by default."""
  text = _flagged(4)
  assert ("var-list-filter", _line(text, "if 'p1' in trainable")) in (
      scanned.found(text))


def test_a_part_handed_to_a_trainer_of_its_own_is_silent():
  """Twin: the script hands `workflow.camera` whole to a function that
  may train it: the rule cannot see that it does not."""
  train = _TRAIN.rstrip(" ") + "    tune(workflow.camera)\n"
  assert _findings(_project(train=train)) == []


def test_a_part_fitted_by_keras_through_the_attribute_is_silent():
  """Twin: the script trains the camera by Keras's own `fit` through the
  workflow's attribute (joint training by turns)."""
  train = _TRAIN.rstrip(" ") + "      workflow.camera.fit(x, labels)\n"
  assert _findings(_project(train=train)) == []


def test_a_part_also_added_in_the_else_arm_is_silent():
  """Twin: the flag chooses between two lists of the camera's variables
  (`else` adds them too): the camera trains on either path."""
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "      self._parameters.extend(self.camera.parameters)\n",
      "      self._parameters.extend(self.camera.parameters)\n"
      "    else:\n"
      "      self._parameters.append(self.camera.net.kernel)\n")
  assert "else:" in files["flow.py"]
  assert _findings(files) == []


def test_an_unrelated_attribute_of_the_same_name_does_not_hide_the_part():
  """What is handed on is read through the object, not by the
  attribute's name alone: `args.camera` given to `print_config` is not
  the workflow's camera (the instance's script passes `args.nip`)."""
  train = _TRAIN.replace(
      "args = parser.parse_args()\n",
      "args = parser.parse_args()\n    print_config(args.camera)\n")
  files = _project(train=train)
  assert _findings(files) == [("var-list-filter", "flow.py",
                               _flag_line(files))]


def test_a_minimize_over_the_list_is_found():
  """S3 of the read: the step is `minimize(lambda: ..., var_list=...)`;
  the loss the callable computes flows through the camera."""
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "    with tf.GradientTape() as tape:\n"
      "      probs = self.run(x)\n"
      "      loss = tf.reduce_mean(tf.square(probs - labels))\n"
      "    grads = tape.gradient(loss, self._parameters)\n"
      "    self._optimizer.apply_gradients(zip(grads, self._parameters))\n"
      "    return loss\n",
      "    self._optimizer.minimize(\n"
      "        lambda: tf.reduce_mean(tf.square(self.run(x) - labels)),\n"
      "        var_list=self._parameters)\n")
  assert "minimize(" in files["flow.py"]
  assert _findings(files) == [("var-list-filter", "flow.py",
                               _flag_line(files))]


def test_a_minimize_of_the_detector_alone_is_silent():
  """Twin: the callable's loss runs the detector on the data alone."""
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "    with tf.GradientTape() as tape:\n"
      "      probs = self.run(x)\n"
      "      loss = tf.reduce_mean(tf.square(probs - labels))\n"
      "    grads = tape.gradient(loss, self._parameters)\n"
      "    self._optimizer.apply_gradients(zip(grads, self._parameters))\n"
      "    return loss\n",
      "    self._optimizer.minimize(\n"
      "        lambda: tf.reduce_mean(self.detector.process(x) - labels),\n"
      "        var_list=self._parameters)\n")
  assert "minimize(" in files["flow.py"]
  assert _findings(files) == []


def _classes(n):
  """`n` workflow classes of the flagged form in one module, each built
  by one script: the script is read once for what it hands on, however
  many classes ask."""
  flow = "import tensorflow as tf\n" + "".join(f"""

class Flow{i}(object):
  def __init__(self, trainable=None):
    self.camera = tf.keras.layers.Dense(4)
    self.detector = tf.keras.layers.Dense(2)
    self.params = []
    self.params.extend(self.detector.trainable_variables)
    if 'camera' in trainable:
      self.params.extend(self.camera.trainable_variables)

  def step(self, x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(self.detector(self.camera(x)))
    grads = tape.gradient(loss, self.params)
    self.opt.apply_gradients(zip(grads, self.params))
""" for i in range(n))
  train = "import flow\n" + "".join(
      f"f{i} = flow.Flow{i}(trainable=None)\nf{i}.step(0)\n"
      for i in range(n))
  return {"flow.py": flow, "train.py": train}


def test_many_classes_built_by_one_script_cost_linear_work():
  from tfpartial._tools.scan import _files, _scan

  def work(files):
    sources = [_files.Source(p, t) for p, t in files.items()]
    return scanned.calls_made(lambda: _scan.scan_project(sources),
                              "_object_parts.py")
  (small, found), (large, _) = (work(_classes(n)) for n in (10, 40))
  assert len([f for f in found[0] if f.path == "flow.py"]) == 10
  assert 0 < small and large <= 5 * small, (small, large)


def test_a_flag_turned_on_by_a_string_is_silent():
  """Twin: the only construction passes `'camera'` (a string holds the
  constant too: `'camera' in 'camera'`)."""
  files = _project(train=_TRAIN.replace("trainable=args.train",
                                        "trainable='camera'"))
  assert _findings(files) == []


def test_a_plain_flag_left_at_its_default_is_found():
  """`if train_camera:` on a constructor parameter whose default is
  False, no construction giving it."""
  files = _project()
  files["flow.py"] = files["flow.py"].replace(
      "trainable=None", "trainable=None, train_camera=False").replace(
          "if 'camera' in trainable:", "if train_camera:")
  assert _findings(files) == [("var-list-filter", "flow.py", _line(
      files["flow.py"], "if train_camera:"))]
