// Gradient descent and momentum with a freeze inside the update:
// tf.compat.v1.train's GradientDescentOptimizer and MomentumOptimizer
// (Nesterov or not), and Keras 3's SGD (plain, momentum, Nesterov; weight
// decay included). Part of kernels.cc.
//
// Each computes, element by element, exactly what tfpartial's unfused step
// leaves behind (the gradient selected to +0 where frozen, the optimizer's
// update, the frozen values restored), in the order of operations of
// TensorFlow's CPU kernels (ApplyGradientDescent and ApplyMomentum in
// core/kernels/training_ops.cc, Eigen expressions evaluated element-wise):
//   v1 SGD:       var -= grad * lr
//   v1 momentum:  accum = accum * momentum + grad
//                 var -= accum * lr                         (plain)
//                 var -= grad * lr + accum * momentum * lr  (Nesterov)
// and of Keras' ops one by one (SGD.update_step, _apply_weight_decay):
//   var -= var * weight_decay * lr      (weight decay, if any)
//   var -= grad * lr                    (no momentum)
//   m    = m * momentum - grad * lr     (momentum; Keras before 3.4 wrote
//                                        -grad * lr + m * momentum: the
//                                        same IEEE result)
//   var += m                            (plain)
//   var += m * momentum - grad * lr     (Nesterov, with the new m)
// The slot (accum, m) moves where frozen too, as a zero gradient moves it;
// the variable keeps its bits there. Compiled without -ffast-math and
// without FMA contraction, so every operation is the correctly rounded one.

#ifndef TFPARTIAL_KERNELS_SGD_H_
#define TFPARTIAL_KERNELS_SGD_H_

#include "common.h"

namespace tfpartial {
namespace {

enum class SgdFlavor { kV1, kKeras };

template <typename T>
struct SgdHyper {
  T lr, momentum, weight_decay;
  bool has_momentum, nesterov, decay;
};

// The element-wise update, with every choice a template argument so that
// the loops below hold no branch and vectorize.
template <typename T, SgdFlavor kFlavor, bool kMomentum, bool kNesterov,
          bool kDecay>
struct SgdStep {
  T lr, mu, wd;
  inline void operator()(int64_t i, typename Bits<T>::Type keep,
                         T* __restrict var, T* __restrict slot,
                         const T* __restrict grad) const {
    const T g = Choose<T>(keep, T(0), grad[i]);
    T updated;
    if (kFlavor == SgdFlavor::kV1) {
      if (!kMomentum) {
        updated = var[i] - g * lr;
      } else {
        const T a = slot[i] * mu + g;
        slot[i] = a;
        updated = kNesterov ? var[i] - (g * lr + a * mu * lr)
                            : var[i] - a * lr;
      }
    } else {
      const T x = kDecay ? var[i] - var[i] * wd * lr : var[i];
      if (!kMomentum) {
        updated = x - g * lr;
      } else {
        const T m = slot[i] * mu - g * lr;
        slot[i] = m;
        updated = kNesterov ? x + (m * mu - g * lr) : x + m;
      }
    }
    var[i] = Choose<T>(keep, var[i], updated);
  }
};

// `step` over [begin, end): `frozen` one byte per element of the span, or
// null when `row_keep` holds for the whole span.
template <typename T, typename Step>
void SgdSpan(const Step& step, int64_t begin, int64_t end, T* __restrict var,
             T* __restrict slot, const T* __restrict grad,
             const uint8_t* __restrict frozen,
             typename Bits<T>::Type row_keep) {
  if (frozen != nullptr) {
    for (int64_t i = begin; i < end; ++i) {
      step(i, Keep<T>(frozen[i - begin]), var, slot, grad);
    }
  } else {
    for (int64_t i = begin; i < end; ++i) step(i, row_keep, var, slot, grad);
  }
}

template <typename T, SgdFlavor kFlavor, bool kMomentum, bool kNesterov,
          bool kDecay>
void SgdRun(OpKernelContext* ctx, const Frozen& frozen,
            const Tensor* trainable, const SgdHyper<T>& h, T* var, T* slot,
            const T* grad) {
  const SgdStep<T, kFlavor, kMomentum, kNesterov, kDecay> step{
      h.lr, h.momentum, h.weight_decay};
  if (trainable != nullptr) {  // Without a slot: only these elements move.
    const int32_t* offsets = trainable->flat<int32_t>().data();
    ParallelFor(ctx, trainable->NumElements(), 1, /*cost_per_element=*/20,
                [&](int64_t begin, int64_t end) {
                  for (int64_t k = begin; k < end; ++k) {
                    step(offsets[k], typename Bits<T>::Type(0), var, slot,
                         grad);
                  }
                });
    return;
  }
  ForEachSpan<T>(ctx, frozen, /*cost_per_element=*/kMomentum ? 12 : 8,
                 [&](int64_t begin, int64_t end, const uint8_t* bytes,
                     typename Bits<T>::Type row_keep) {
                   SgdSpan<T>(step, begin, end, var, slot, grad, bytes,
                              row_keep);
                 });
}

// One op of each signature below: v1 or Keras, with a slot or without.
template <typename T, SgdFlavor kFlavor, bool kMomentum>
class PartialApplySgdOp : public OpKernel {
 public:
  explicit PartialApplySgdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_locking", &use_exclusive_lock_));
    nesterov_ = decay_ = false;
    if (kMomentum) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr(
          kFlavor == SgdFlavor::kV1 ? "use_nesterov" : "nesterov",
          &nesterov_));
    }
    if (kFlavor == SgdFlavor::kKeras) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("decay", &decay_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const std::vector<int> variables =
        kMomentum ? std::vector<int>{0, 1} : std::vector<int>{0};
    auto locks = Lock<T>(ctx, use_exclusive_lock_, variables);
    std::vector<Tensor> vars;
    OP_REQUIRES_OK(ctx, GetVariables<T>(ctx, use_exclusive_lock_, variables,
                                        &vars));
    Tensor& var = vars[0];
    // Inputs after the variables: v1 momentum keeps ApplyMomentum's order
    // (lr, grad, momentum); the others put the scalars first (lr,
    // [momentum], [weight_decay]), then grad. `frozen` is last.
    const int first = static_cast<int>(vars.size());
    const bool v1_momentum = kFlavor == SgdFlavor::kV1 && kMomentum;
    const int frozen_input = ctx->num_inputs() - 1;
    const int grad_input = v1_momentum ? first + 1 : frozen_input - 1;
    const Tensor& grad = ctx->input(grad_input);
    if (kMomentum) {
      OP_REQUIRES_OK(ctx, CheckSameShape(var.shape(), {vars[1], grad},
                                         "var, its slot and grad"));
    } else {
      OP_REQUIRES_OK(ctx, CheckSameShape(var.shape(), {grad},
                                         "var and grad"));
    }
    // Without a slot, `frozen` may instead be the trainable elements'
    // offsets (int32, rising): for a mostly frozen variable, the update
    // then touches only those.
    Frozen frozen{};
    const Tensor* trainable = nullptr;
    if (!kMomentum && ctx->input_dtype(frozen_input) == ::tensorflow::DT_INT32) {
      trainable = &ctx->input(frozen_input);
      OP_REQUIRES_OK(ctx, CheckOffsets(*trainable, var.NumElements()));
    } else {
      OP_REQUIRES_OK(ctx, ReadFrozen(ctx->input(frozen_input), var.shape(),
                                     &frozen));
    }
    std::vector<int> scalars;
    for (int i = first; i < frozen_input; ++i) {
      if (i != grad_input) scalars.push_back(i);
    }
    for (int i : scalars) OP_REQUIRES_OK(ctx, CheckScalars(ctx, i, i + 1));
    auto scalar = [ctx](int i) { return ctx->input(i).scalar<T>()(); };
    SgdHyper<T> h;
    h.lr = scalar(scalars[0]);
    h.momentum = kMomentum ? scalar(scalars[1]) : T(0);
    h.weight_decay =
        kFlavor == SgdFlavor::kKeras ? scalar(scalars.back()) : T(0);
    h.has_momentum = kMomentum;
    h.nesterov = nesterov_;
    h.decay = decay_;
    T* var_p = var.flat<T>().data();
    T* slot_p = kMomentum ? vars[1].flat<T>().data() : nullptr;
    const T* grad_p = grad.flat<T>().data();
    // Nesterov only with momentum, weight decay only for Keras.
    constexpr bool kCanDecay = kFlavor == SgdFlavor::kKeras;
    if (h.nesterov && h.decay) {
      SgdRun<T, kFlavor, kMomentum, kMomentum, kCanDecay>(
          ctx, frozen, trainable, h, var_p, slot_p, grad_p);
    } else if (h.nesterov) {
      SgdRun<T, kFlavor, kMomentum, kMomentum, false>(
          ctx, frozen, trainable, h, var_p, slot_p, grad_p);
    } else if (h.decay) {
      SgdRun<T, kFlavor, kMomentum, false, kCanDecay>(
          ctx, frozen, trainable, h, var_p, slot_p, grad_p);
    } else {
      SgdRun<T, kFlavor, kMomentum, false, false>(
          ctx, frozen, trainable, h, var_p, slot_p, grad_p);
    }
    ForwardRef(ctx);
  }

 private:
  bool use_exclusive_lock_;
  bool nesterov_;
  bool decay_;
};

}  // namespace
}  // namespace tfpartial

// ApplyGradientDescent's and ApplyMomentum's inputs and attributes, with
// `frozen` last; each in TF1 `Ref(T)` and `resource` form.
#define TFPARTIAL_GD_SIGNATURE(VARIABLE) \
  .Input("var: " VARIABLE)               \
      .Input("alpha: T")                 \
      .Input("delta: T")                 \
      .Input("frozen: Tfrozen")          \
      .Attr("T: {float, double}")        \
      .Attr("Tfrozen: {bool, int32, uint8} = DT_BOOL") \
      .Attr("use_locking: bool = false")

#define TFPARTIAL_MOMENTUM_SIGNATURE(VARIABLE) \
  .Input("var: " VARIABLE)                     \
      .Input("accum: " VARIABLE)               \
      .Input("lr: T")                          \
      .Input("momentum: T")                    \
      .Input("grad: T")                        \
      .Input("frozen: Tfrozen")                \
      .Attr("T: {float, double}")              \
      .Attr("Tfrozen: {bool, uint8} = DT_BOOL") \
      .Attr("use_locking: bool = false")       \
      .Attr("use_nesterov: bool = false")

REGISTER_OP("TfpartialApplyGradientDescent")
    TFPARTIAL_GD_SIGNATURE("Ref(T)").TFPARTIAL_REF_OUTPUT;
REGISTER_OP("TfpartialResourceApplyGradientDescent")
    TFPARTIAL_GD_SIGNATURE("resource").TFPARTIAL_NO_OUTPUT;
REGISTER_OP("TfpartialApplyMomentum")
    TFPARTIAL_MOMENTUM_SIGNATURE("Ref(T)").TFPARTIAL_REF_OUTPUT;
REGISTER_OP("TfpartialResourceApplyMomentum")
    TFPARTIAL_MOMENTUM_SIGNATURE("resource").TFPARTIAL_NO_OUTPUT;

// Keras 3's SGD without momentum, and with it (weight decay if `decay`).
// The ops without a slot take `frozen` as a bool mask or, for a mostly
// frozen variable, as the trainable elements' offsets (int32).
REGISTER_OP("TfpartialResourceApplyKerasSgd")
    .Input("var: resource")
    .Input("lr: T")
    .Input("weight_decay: T")
    .Input("grad: T")
    .Input("frozen: Tfrozen")
    .Attr("T: {float, double}")
    .Attr("Tfrozen: {bool, int32} = DT_BOOL")
    .Attr("decay: bool")
    .Attr("use_locking: bool = false")
    .TFPARTIAL_NO_OUTPUT;
REGISTER_OP("TfpartialResourceApplyKerasMomentum")
    .Input("var: resource")
    .Input("m: resource")
    .Input("lr: T")
    .Input("momentum: T")
    .Input("weight_decay: T")
    .Input("grad: T")
    .Input("frozen: bool")
    .Attr("T: {float, double}")
    .Attr("decay: bool")
    .Attr("nesterov: bool")
    .Attr("use_locking: bool = false")
    .TFPARTIAL_NO_OUTPUT;

#define TFPARTIAL_SGD_KERNEL(NAME, T, FLAVOR, MOMENTUM)               \
  REGISTER_KERNEL_BUILDER(                                            \
      Name(NAME).Device(::tensorflow::DEVICE_CPU).TypeConstraint<T>("T"), \
      ::tfpartial::PartialApplySgdOp<T, ::tfpartial::SgdFlavor::FLAVOR, \
                                     MOMENTUM>)
#define TFPARTIAL_SGD_RESOURCE_KERNEL(NAME, T, FLAVOR, MOMENTUM)      \
  REGISTER_KERNEL_BUILDER(                                            \
      Name(NAME).Device(::tensorflow::DEVICE_CPU).HostMemory("var")   \
          .TypeConstraint<T>("T"),                                    \
      ::tfpartial::PartialApplySgdOp<T, ::tfpartial::SgdFlavor::FLAVOR, \
                                     MOMENTUM>)
#define TFPARTIAL_REGISTER_SGD(T)                                             \
  TFPARTIAL_SGD_KERNEL("TfpartialApplyGradientDescent", T, kV1, false);       \
  TFPARTIAL_SGD_RESOURCE_KERNEL("TfpartialResourceApplyGradientDescent", T,   \
                                kV1, false);                                  \
  TFPARTIAL_SGD_KERNEL("TfpartialApplyMomentum", T, kV1, true);               \
  TFPARTIAL_SGD_RESOURCE_KERNEL("TfpartialResourceApplyMomentum", T, kV1,     \
                                true);                                        \
  TFPARTIAL_SGD_RESOURCE_KERNEL("TfpartialResourceApplyKerasSgd", T, kKeras,  \
                                false);                                       \
  TFPARTIAL_SGD_RESOURCE_KERNEL("TfpartialResourceApplyKerasMomentum", T,     \
                                kKeras, true)
TFPARTIAL_REGISTER_SGD(float);
TFPARTIAL_REGISTER_SGD(double);

#endif  // TFPARTIAL_KERNELS_SGD_H_
