// Adam's dense update with a freeze inside it: tf.compat.v1.train's
// AdamOptimizer, and Keras 3's Adam and AdamW (weight decay included).
//
// Part of kernels.cc, built and loaded by tfpartial/_native.py. Stock TensorFlow has no update
// that leaves chosen elements alone: behind its updates an exact freeze
// must mask the gradient, copy the frozen values and merge them back,
// extra passes over the variable's memory. This kernel makes one pass, and
// writes each frozen element's old value.
//
// It computes, element by element, exactly what tfpartial's unfused step
// leaves behind (the gradient selected to +0 where frozen, the optimizer's
// update, the frozen values restored), in the order of operations of
// TensorFlow's CPU kernel (ApplyAdamNonCuda in core/kernels/training_ops.cc)
// and of Keras' ops one by one (Adam.update_step, _apply_weight_decay):
//   var -= var * weight_decay * lr           (Keras' weight decay, if any)
//   m   += (g - m) * (1 - beta1)            (also where frozen, with g = +0)
//   v   += (g * g - v) * (1 - beta2)        (likewise)
//   var -= (m * alpha) / (sqrt(v) + epsilon) (only where not frozen)
// with alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power), computed
// here for tf.compat.v1, and by Keras' own ops for Keras. Compiled without
// -ffast-math and without FMA contraction, every operation is the
// correctly rounded IEEE one, so the results match bit for bit.
//
// `frozen` has the variable's shape (one bool per element) or holds one
// bool per row (the first axis).

#ifndef TFPARTIAL_KERNELS_ADAM_H_
#define TFPARTIAL_KERNELS_ADAM_H_

#include "common.h"

namespace tfpartial {
namespace {

template <typename T>
struct Hyper {
  T alpha, one_minus_beta1, one_minus_beta2, epsilon;
  bool decay;             // Keras' weight decay, before the update:
  T weight_decay, lr;     //   var -= var * weight_decay * lr
};

// Elements [begin, end); `frozen` is one byte per element, or null when
// `row_frozen` (all ones or all zeros) holds for the whole span.
template <typename T>
void AdamUpdate(int64_t begin, int64_t end, T* __restrict var, T* __restrict m,
            T* __restrict v, const T* __restrict grad,
            const uint8_t* __restrict frozen,
            typename Bits<T>::Type row_frozen, Hyper<T> h) {
  using U = typename Bits<T>::Type;
  for (int64_t i = begin; i < end; ++i) {
    const U keep = frozen ? U(0) - static_cast<U>(frozen[i]) : row_frozen;
    const T g = Choose<T>(keep, T(0), grad[i]);
    const T m_i = m[i] + (g - m[i]) * h.one_minus_beta1;
    const T v_i = v[i] + (g * g - v[i]) * h.one_minus_beta2;
    const T x = h.decay ? var[i] - var[i] * h.weight_decay * h.lr : var[i];
    m[i] = m_i;
    v[i] = v_i;
    var[i] = Choose<T>(keep, var[i],
                       x - (m_i * h.alpha) / (std::sqrt(v_i) + h.epsilon));
  }
}

// `kKeras`: Keras 3's Adam and AdamW, whose scalars come computed (alpha,
// 1 - beta_1, ...) as Keras computes them, with the weight decay; else
// tf.compat.v1's Adam, whose scalars are ApplyAdam's.
template <typename T, bool kKeras>
class PartialApplyAdamOp : public OpKernel {
 public:
  explicit PartialApplyAdamOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_locking", &use_exclusive_lock_));
    decay_ = false;
    if (kKeras) OP_REQUIRES_OK(ctx, ctx->GetAttr("decay", &decay_));
  }

  void Compute(OpKernelContext* ctx) override {
    auto locks = Lock<T>(ctx, use_exclusive_lock_, {0, 1, 2});
    std::vector<Tensor> vars;
    OP_REQUIRES_OK(ctx, GetVariables<T>(ctx, use_exclusive_lock_, {0, 1, 2},
                                        &vars));
    Tensor &var = vars[0], &m = vars[1], &v = vars[2];
    const Tensor& grad = ctx->input(9);
    OP_REQUIRES_OK(ctx, CheckSameShape(var.shape(), {m, v, grad},
                                       "var, m, v and grad"));
    Frozen frozen;
    OP_REQUIRES_OK(ctx, ReadFrozen(ctx->input(10), var.shape(), &frozen));
    OP_REQUIRES_OK(ctx, CheckScalars(ctx, 3, 9));
    auto scalar = [ctx](int i) { return ctx->input(i).scalar<T>()(); };
    Hyper<T> h;
    if (kKeras) {
      h.alpha = scalar(3);
      h.one_minus_beta1 = scalar(4);
      h.one_minus_beta2 = scalar(5);
      h.epsilon = scalar(6);
      h.weight_decay = scalar(7);
      h.lr = scalar(8);
      h.decay = decay_;
    } else {
      const T beta1_power = scalar(3), beta2_power = scalar(4);
      h.alpha = scalar(5) * Eigen::numext::sqrt(T(1) - beta2_power) /
                (T(1) - beta1_power);
      h.one_minus_beta1 = T(1) - scalar(6);
      h.one_minus_beta2 = T(1) - scalar(7);
      h.epsilon = scalar(8);
      h.decay = false;
      h.weight_decay = h.lr = T(0);
    }
    T* var_p = var.flat<T>().data();
    T* m_p = m.flat<T>().data();
    T* v_p = v.flat<T>().data();
    const T* grad_p = grad.flat<T>().data();
    ForEachSpan<T>(ctx, frozen, /*cost_per_element=*/30,
                   [&](int64_t begin, int64_t end, const uint8_t* bytes,
                       typename Bits<T>::Type row_keep) {
                     AdamUpdate<T>(begin, end, var_p, m_p, v_p, grad_p, bytes,
                               row_keep, h);
                   });
    ForwardRef(ctx);
  }

 private:
  bool use_exclusive_lock_;
  bool decay_;
};

}  // namespace
}  // namespace tfpartial

// ApplyAdam's inputs and attributes, with `frozen` after `grad`; the two
// ops differ only in how they take the variables (`Ref(T)` or `resource`).
#define TFPARTIAL_ADAM_SIGNATURE(VARIABLE) \
  .Input("var: " VARIABLE)                 \
      .Input("m: " VARIABLE)               \
      .Input("v: " VARIABLE)               \
      .Input("beta1_power: T")             \
      .Input("beta2_power: T")             \
      .Input("lr: T")                      \
      .Input("beta1: T")                   \
      .Input("beta2: T")                   \
      .Input("epsilon: T")                 \
      .Input("grad: T")                    \
      .Input("frozen: bool")               \
      .Attr("T: {float, double}")          \
      .Attr("use_locking: bool = false")

REGISTER_OP("TfpartialApplyAdam")
    TFPARTIAL_ADAM_SIGNATURE("Ref(T)")
    .Output("out: Ref(T)")
    .SetShapeFn([](::tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      return ::tensorflow::OkStatus();
    });

REGISTER_OP("TfpartialResourceApplyAdam")
    TFPARTIAL_ADAM_SIGNATURE("resource")
    .SetShapeFn(::tensorflow::shape_inference::NoOutputs);

// Keras 3's Adam / AdamW update_step (and weight decay, if `decay`).
REGISTER_OP("TfpartialResourceApplyKerasAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("alpha: T")
    .Input("one_minus_beta1: T")
    .Input("one_minus_beta2: T")
    .Input("epsilon: T")
    .Input("weight_decay: T")
    .Input("lr: T")
    .Input("grad: T")
    .Input("frozen: bool")
    .Attr("T: {float, double}")
    .Attr("decay: bool")
    .Attr("use_locking: bool = false")
    .SetShapeFn(::tensorflow::shape_inference::NoOutputs);

#define TFPARTIAL_REGISTER_ADAM(T)                                             \
  REGISTER_KERNEL_BUILDER(Name("TfpartialApplyAdam")                      \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .TypeConstraint<T>("T"),                    \
                          ::tfpartial::PartialApplyAdamOp<T, false>);     \
  REGISTER_KERNEL_BUILDER(Name("TfpartialResourceApplyAdam")              \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .HostMemory("var")                          \
                              .HostMemory("m")                            \
                              .HostMemory("v")                            \
                              .TypeConstraint<T>("T"),                    \
                          ::tfpartial::PartialApplyAdamOp<T, false>);     \
  REGISTER_KERNEL_BUILDER(Name("TfpartialResourceApplyKerasAdam")         \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .HostMemory("var")                          \
                              .HostMemory("m")                            \
                              .HostMemory("v")                            \
                              .TypeConstraint<T>("T"),                    \
                          ::tfpartial::PartialApplyAdamOp<T, true>);
TFPARTIAL_REGISTER_ADAM(float);
TFPARTIAL_REGISTER_ADAM(double);

#endif  // TFPARTIAL_KERNELS_ADAM_H_
