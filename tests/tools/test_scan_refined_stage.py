"""`tfpartial scan`'s `var-list-filter` on a two-stage generator whose
second stage refines the first's output (part twenty-eight's PG2, 28d:
`G1, DiffMap, self.G_var1, self.G_var2 = Generator(x, pose)`, `G2 = G1 +
DiffMap`; the stage-one step run while `step < 22000`, then only the
stage-two step and the discriminator's): from the bound on the stage-one
generator, a term of the output the loss fits, stays fixed. Found at the
loop's read of the stage-two op. Silent twins: the stage-two step also
training the stage-one list (a model trained whole in its second stage),
a stage-two loss that does not reach the sum, stages taking turns by
parity (a GAN's halves), the order reversed (the refinement warmed up
first), and a teacher whose output the student's loss compares against
(distillation: no sum)."""

import pytest

import scanned

# `%s`: the stage-two list, the stage-two loss's extra term, the loop's
# test, and which op each arm runs.
_TRAINER = """\
    import tensorflow as tf
    from models import GeneratorCNN_Pose, DCGANDiscriminator
    import tflib as lib


    class Trainer(object):
        def _getOptimizer(self, gen_cost1, gen_cost2, disc_cost, G_var1, G_var2, D_var):
            gen_train_op1 = tf.train.AdamOptimizer(2e-5, beta1=0.5).minimize(gen_cost1,
                                                  var_list=G_var1)
            gen_train_op2 = tf.train.AdamOptimizer(2e-5, beta1=0.5).minimize(gen_cost2,
                                                  var_list=%s)
            disc_train_op = tf.train.AdamOptimizer(2e-5, beta1=0.5).minimize(disc_cost,
                                                   var_list=D_var)
            return gen_train_op1, gen_train_op2, disc_train_op

        def build_model(self):
            G1, DiffMap, self.G_var1, self.G_var2 = GeneratorCNN_Pose(self.x, self.pose_target)
            G2 = %s
            self.D_z, self.D_var = DCGANDiscriminator(
                tf.concat([self.x_target, G2], 0))
            d_real, d_fake = tf.split(self.D_z, 2)
            self.g_loss1 = tf.reduce_mean(tf.abs(G1 - self.x_target))
            self.g_loss2, self.d_loss = self._gan_loss(d_real, d_fake)
            self.L1Loss2 = tf.reduce_mean(tf.abs(%s - self.x_target))
            self.g_loss2 += self.L1Loss2 * 10
            self.g_optim1, self.g_optim2, self.d_optim = self._getOptimizer(
                self.g_loss1, self.g_loss2, self.d_loss, self.G_var1, self.G_var2, self.D_var)

        def _gan_loss(self, d_real, d_fake):
            g = -tf.reduce_mean(d_fake)
            d = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
            return g, d

        def train(self):
            for step in range(self.start_step, self.max_step):
                if %s:
                    self.sess.run(self.%s)
                else:
                    self.sess.run(self.%s)
                    self.sess.run(self.d_optim)
    """


def _found(var_list="G_var2", output="G1 + DiffMap", fitted="G2",
           test="step < 22000", before="g_optim1", after="g_optim2"):
  return [each for each in scanned.found(_TRAINER % (
      var_list, output, fitted, test, before, after))
          if each[0] == "var-list-filter"]


def test_the_first_stage_left_from_the_bound_on_is_found():
  assert _found() == [("var-list-filter", 39)]


def test_the_bound_written_from_the_later_side_is_found():
  assert _found(test="step >= 22000", before="g_optim2",
                after="g_optim1") == [("var-list-filter", 37)]


@pytest.mark.parametrize("kwargs", [
    # The second stage trains both generators.
    {"var_list": "G_var1 + G_var2"},
    # Only the refinement's own output in the second stage's L1 loss and
    # no sum: the first stage's output feeds nothing of it.
    {"output": "DiffMap", "fitted": "DiffMap"},
    # Taking turns by parity.
    {"test": "step % 2 == 0"},
    # The refinement warmed up first, then the first stage.
    {"before": "g_optim2", "after": "g_optim1"},
    # A teacher's output as the target of the student's loss: no sum.
    {"output": "DiffMap", "fitted": "G1 - G2"},
], ids=["second_stage_trains_both", "loss_not_reaching_the_sum",
        "parity", "reversed", "teacher_target"])
def test_look_alikes_are_silent(kwargs):
  assert _found(**kwargs) == []
