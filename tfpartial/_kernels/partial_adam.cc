// Adam's dense update with a freeze inside it: tf.compat.v1.train's
// AdamOptimizer, and Keras 3's Adam and AdamW (weight decay included).
//
// Built and loaded by tfpartial/_native.py. Stock TensorFlow has no update
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

#define EIGEN_USE_THREADS

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/kernels/training_op_helpers.h"
#include "tensorflow/core/util/work_sharder.h"

namespace tfpartial {
namespace {

using ::tensorflow::DEVICE_CPU;
using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShapeUtils;
using CPUDevice = Eigen::ThreadPoolDevice;

template <typename T> struct Bits;
template <> struct Bits<float> { using Type = uint32_t; };
template <> struct Bits<double> { using Type = uint64_t; };

// `keep` is all ones (frozen) or all zeros; a bitwise choice compiles to
// vector blends, where a branch would stop the loop from vectorizing.
template <typename T>
inline T Choose(typename Bits<T>::Type keep, T kept, T updated) {
  typename Bits<T>::Type a, b;
  std::memcpy(&a, &kept, sizeof(T));
  std::memcpy(&b, &updated, sizeof(T));
  const typename Bits<T>::Type r = (a & keep) | (b & ~keep);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

template <typename T>
struct Hyper {
  T alpha, one_minus_beta1, one_minus_beta2, epsilon;
  bool decay;             // Keras' weight decay, before the update:
  T weight_decay, lr;     //   var -= var * weight_decay * lr
};

// Elements [begin, end); `frozen` is one byte per element, or null when
// `row_frozen` (all ones or all zeros) holds for the whole span.
template <typename T>
void Update(int64_t begin, int64_t end, T* __restrict var, T* __restrict m,
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
    const bool sparse = false;
    auto locks = ::tensorflow::MaybeLockVariableInputMutexesInOrder<
        CPUDevice, T>(ctx, use_exclusive_lock_, sparse, {0, 1, 2});
    Tensor var, m, v;
    OP_REQUIRES_OK(ctx, ::tensorflow::GetInputTensorFromVariable<CPUDevice, T>(
                            ctx, 0, use_exclusive_lock_, sparse, &var));
    OP_REQUIRES_OK(ctx, ::tensorflow::GetInputTensorFromVariable<CPUDevice, T>(
                            ctx, 1, use_exclusive_lock_, sparse, &m));
    OP_REQUIRES_OK(ctx, ::tensorflow::GetInputTensorFromVariable<CPUDevice, T>(
                            ctx, 2, use_exclusive_lock_, sparse, &v));
    OP_REQUIRES(ctx,
                var.IsInitialized() && m.IsInitialized() && v.IsInitialized(),
                ::tensorflow::errors::FailedPrecondition(
                    "Attempting to use uninitialized variables: ",
                    requested_input(0)));
    const Tensor& grad = ctx->input(9);
    const Tensor& frozen = ctx->input(10);
    OP_REQUIRES(ctx,
                var.shape().IsSameSize(m.shape()) &&
                    var.shape().IsSameSize(v.shape()) &&
                    var.shape().IsSameSize(grad.shape()),
                ::tensorflow::errors::InvalidArgument(
                    "var, m, v and grad must have one shape: ",
                    var.shape().DebugString(), " ", m.shape().DebugString(),
                    " ", v.shape().DebugString(), " ",
                    grad.shape().DebugString()));
    const int64_t size = var.NumElements();
    const int64_t rows = var.dims() > 0 ? var.dim_size(0) : 1;
    const bool per_element = frozen.NumElements() == size;
    OP_REQUIRES(ctx, per_element || frozen.NumElements() == rows,
                ::tensorflow::errors::InvalidArgument(
                    "frozen must hold one bool per element or per row of ",
                    var.shape().DebugString(), "; got ",
                    frozen.shape().DebugString()));
    for (int i = 3; i < 9; ++i) {
      OP_REQUIRES(ctx, TensorShapeUtils::IsScalar(ctx->input(i).shape()),
                  ::tensorflow::errors::InvalidArgument(
                      "input ", i, " must be a scalar: ",
                      ctx->input(i).shape().DebugString()));
    }
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
    const uint8_t* frozen_p =
        reinterpret_cast<const uint8_t*>(frozen.flat<bool>().data());
    auto* workers = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    const int threads = workers->NumThreads();
    using U = typename Bits<T>::Type;
    if (per_element) {
      ::tensorflow::Shard(
          threads, workers, size, /*cost_per_unit=*/30,
          [=](int64_t begin, int64_t end) {
            Update<T>(begin, end, var_p, m_p, v_p, grad_p, frozen_p, U(0), h);
          });
    } else if (rows > 0) {
      const int64_t row_size = size / rows;
      ::tensorflow::Shard(
          threads, workers, rows, /*cost_per_unit=*/30 * row_size,
          [=](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
              const int64_t first = row * row_size;
              Update<T>(first, first + row_size, var_p, m_p, v_p, grad_p,
                        nullptr, U(0) - static_cast<U>(frozen_p[row]), h);
            }
          });
    }
    // MaybeForwardRefInputToRefOutput, which not every release exports.
    if (::tensorflow::IsRefType(ctx->input_dtype(0))) {
      ctx->forward_ref_input_to_ref_output(0, 0);
    }
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

#define TFPARTIAL_REGISTER(T)                                             \
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
TFPARTIAL_REGISTER(float);
TFPARTIAL_REGISTER(double);
