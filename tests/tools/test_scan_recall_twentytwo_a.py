"""Round 22a's recall: a step's list read from the model's own accessor
of some of its parts (an `@property` returning the head's variables, a
method returning the prompt tokens and the head's), while the function
runs the whole model, and the newest block of a model a loop grows
stage by stage, found as `var-list-filter`. Beside them what
stays silent: a GAN's generator and discriminator accessors each trained
by a step of its own, an accessor returning the model's whole list, an
accessor of every part the forward runs, a teacher's variables never
trained beside a student's accessor trained by itself, a part's class
trained whole elsewhere (a GAN's other half), a grown model trained
together again after its stages, and a block trained on its own output."""

import scanned

# A model of three parts, run whole by its forward.
_MODEL = '''
import tensorflow as tf

class Net(tf.Module):
  def __init__(self):
    super().__init__()
    self.conv_stack = tf.keras.Sequential([tf.keras.layers.Conv2D(8, 3),
                                           tf.keras.layers.Flatten()])
    self.final_conv = tf.keras.layers.Dense(32)
    self.prompt_tokens = tf.Variable(tf.zeros([4, 32]))
    self.classifier = tf.keras.layers.Dense(10)

  @property
  def trainable_classifier_vars(self):
    return self.classifier.trainable_variables

  def prompt_tune_variables(self):
    variables = [self.prompt_tokens]
    variables.extend(self.classifier.trainable_variables)
    return variables

  @property
  def every_var(self):
    return self.trainable_variables

  def features(self, x):
    return self.final_conv(self.conv_stack(x)) + self.prompt_tokens[0]

  def __call__(self, x):
    return self.classifier(self.features(x))
'''

_STEP = '''
def learn(data, prompt_only):
  model = Net()
  optimizer = tf.keras.optimizers.Adam(1e-3)
  for x, y in data:
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(
          tf.keras.losses.sparse_categorical_crossentropy(
              y, model(x), from_logits=True))
    train_vars = {chosen}
    gradients = tape.gradient(loss, train_vars)
    optimizer.apply_gradients(zip(gradients, train_vars))
'''


def _found(chosen, more=""):
  code = _MODEL + _STEP.replace("{chosen}", chosen) + more
  return scanned.found(code)


def _line_of(code, text):
  return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def test_a_property_of_the_model_s_head_is_found():
  code = _MODEL + _STEP.replace("{chosen}", "model.trainable_classifier_vars")
  assert scanned.found(code) == [
      ("var-list-filter", _line_of(code, "train_vars = model."))]


def test_a_method_of_prompts_and_head_chosen_by_a_flag_is_found():
  chosen = ("model.prompt_tune_variables() if prompt_only "
            "else model.trainable_variables")
  assert [idiom for idiom, _ in _found(chosen)] == ["var-list-filter"]


def test_the_whole_model_pretrained_elsewhere_is_an_alternative():
  pretrain = '''
def pretrain(data):
  model = Net()
  optimizer = tf.keras.optimizers.Adam(1e-3)
  for x in data:
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(model(x) ** 2)
    optimizer.apply_gradients(zip(
        tape.gradient(loss, model.trainable_variables),
        model.trainable_variables))
'''
  assert [idiom for idiom, _ in _found(
      "model.prompt_tune_variables()", pretrain)] == ["var-list-filter"]


def test_an_accessor_of_the_whole_model_is_silent():
  assert _found("model.every_var") == []


def test_an_accessor_of_every_part_the_forward_runs_is_silent():
  code = _MODEL.replace(
      "return self.classifier.trainable_variables",
      "return (self.conv_stack.trainable_variables + "
      "self.final_conv.trainable_variables + [self.prompt_tokens] + "
      "self.classifier.trainable_variables)")
  assert scanned.found(code + _STEP.replace(
      "{chosen}", "model.trainable_classifier_vars")) == []


def test_a_property_never_read_as_one_is_silent():
  # `model.prompt_tune_variables` without the call is the bound method.
  assert _found("model.trainable_classifier_vars()") == []


_GAN = '''
import tensorflow as tf

class GAN(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.generator = tf.keras.Sequential([tf.keras.layers.Dense(64)])
    self.discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])

  @property
  def generator_vars(self):
    return self.generator.trainable_variables

  @property
  def discriminator_vars(self):
    return self.discriminator.trainable_variables

  def call(self, z):
    return self.discriminator(self.generator(z))

gan = GAN()
g_opt = tf.keras.optimizers.Adam(1e-4)
d_opt = tf.keras.optimizers.Adam(1e-4)

@tf.function
def train_step(z, real):
  with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
    fake_logits = gan(z)
    real_logits = gan.discriminator(real)
    g_loss = -tf.reduce_mean(fake_logits)
    d_loss = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits)
  g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gan.generator_vars),
                            gan.generator_vars))
  d_opt.apply_gradients(zip(d_tape.gradient(d_loss, gan.discriminator_vars),
                            gan.discriminator_vars))
'''


def test_a_gan_s_two_accessors_each_trained_are_silent():
  assert scanned.found(_GAN) == []


_DISTILL = '''
import tensorflow as tf

class Distiller(tf.keras.Model):
  def __init__(self, teacher):
    super().__init__()
    self.teacher = teacher
    self.student = tf.keras.Sequential([tf.keras.layers.Dense(10)])

  @property
  def student_vars(self):
    return self.student.trainable_variables

  def call(self, x):
    return self.student(x), tf.stop_gradient(self.teacher(x))

def distill(teacher, data):
  model = Distiller(teacher)
  optimizer = tf.keras.optimizers.Adam(1e-3)
  for x in data:
    with tf.GradientTape() as tape:
      student, target = model(x)
      loss = tf.reduce_mean((student - target) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.student_vars),
                                  model.student_vars))
'''


def test_a_teacher_run_only_for_targets_is_silent():
  assert scanned.found(_DISTILL) == []


_OTHER_MODEL = '''
class Baseline(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.dense = tf.keras.layers.Dense(10)

  def call(self, x):
    return self.dense(x)

def baseline(data):
  model = Baseline()
  optimizer = tf.keras.optimizers.Adam(1e-3)
  for x, y in data:
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(x) - y) ** 2)
    optimizer.apply_gradients(zip(
        tape.gradient(loss, model.trainable_variables),
        model.trainable_variables))
'''


def test_another_model_trained_whole_elsewhere_is_not_a_half():
  assert [idiom for idiom, _ in _found(
      "model.prompt_tune_variables()", _OTHER_MODEL)] == ["var-list-filter"]


_GAN_APART = '''
import tensorflow as tf

class Critic(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.out = tf.keras.layers.Dense(1)

  def call(self, x):
    return self.out(x)

class GAN(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.generator = tf.keras.Sequential([tf.keras.layers.Dense(64)])
    self.critic = Critic()

  @property
  def generator_vars(self):
    return self.generator.trainable_variables

  def call(self, z):
    return self.critic(self.generator(z))

def train_generator(data):
  gan = GAN()
  opt = tf.keras.optimizers.Adam(1e-4)
  for z in data:
    with tf.GradientTape() as tape:
      loss = -tf.reduce_mean(gan(z))
    opt.apply_gradients(zip(tape.gradient(loss, gan.generator_vars),
                            gan.generator_vars))

def train_critic(data):
  critic = Critic()
  opt = tf.keras.optimizers.Adam(1e-4)
  for x in data:
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(critic(x))
    opt.apply_gradients(zip(tape.gradient(loss, critic.trainable_variables),
                            critic.trainable_variables))
'''


def test_a_part_s_own_class_trained_whole_elsewhere_is_the_other_half():
  # The model builds a `Critic` as a part: a step training a `Critic`
  # whole is the other half, as a GAN's discriminator is.
  assert scanned.found(_GAN_APART) == []


# A model a loop grows by one block a stage (greedy, stage-wise).
_GROWN = '''
import tensorflow as tf

class Block(tf.keras.layers.Layer):
  def __init__(self):
    super().__init__()
    self.dense = tf.keras.layers.Dense(16)

  def call(self, x):
    return x + self.dense(x)

class Stacked(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.stem = tf.keras.layers.Dense(16)
    self.blocks = []

  def add_block(self, block):
    self.blocks.append(block)

  def call(self, x):
    h = self.stem(x)
    for block in self.blocks:
      h = block(h)
    return h

def learn(data, stages):
  model = Stacked()
  optimizer = tf.keras.optimizers.Adam(1e-3)
  for stage in range(stages):
    block = Block()
    model.add_block(block)
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
      gradients = tape.gradient(loss, block.trainable_variables)
      optimizer.apply_gradients(zip(gradients, block.trainable_variables))
'''


def test_the_newest_block_of_a_grown_model_is_found():
  assert scanned.found(_GROWN) == [
      ("var-list-filter", _line_of(_GROWN, "tape.gradient(loss, block."))]


def test_a_grown_model_trained_together_again_is_silent():
  joint = _GROWN + '''
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
      optimizer.apply_gradients(zip(
          tape.gradient(loss, model.trainable_variables),
          model.trainable_variables))
'''
  assert scanned.found(joint) == []


def test_a_block_trained_on_its_own_output_not_the_model_s_is_silent():
  # The loss runs the block alone, not the grown model.
  alone = _GROWN.replace("loss = tf.reduce_mean((model(x) - y) ** 2)",
                         "loss = tf.reduce_mean((block(x) - y) ** 2)")
  assert scanned.found(alone) == []
