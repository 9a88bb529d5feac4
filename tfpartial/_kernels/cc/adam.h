// Adam's dense update with a freeze inside it: tf.compat.v1.train's
// AdamOptimizer, and Keras 3's Adam and AdamW (weight decay included).
//
// Part of kernels.cc, built and loaded by _kernels/_native.py. Stock TensorFlow has no update
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

// One element of Adam's update with the freeze inside, for the dense and
// the sparse loops alike: `g` and `g2` (the gradient and its square, as
// each update squares it) are +0 where `keep` is all ones, and there
// `var` keeps its value while `m` and `v` advance as a zero gradient would.
template <typename T>
inline void AdamElement(T& __restrict var, T& __restrict m, T& __restrict v,
                        const T g, const T g2, typename Bits<T>::Type keep,
                        const Hyper<T>& h) {
  const T m_new = m + (g - m) * h.one_minus_beta1;
  const T v_new = v + (g2 - v) * h.one_minus_beta2;
  const T x = h.decay ? var - var * h.weight_decay * h.lr : var;
  m = m_new;
  v = v_new;
  var = Choose<T>(keep, var,
                  x - (m_new * h.alpha) / (std::sqrt(v_new) + h.epsilon));
}

// Elements [begin, end); `frozen` is one byte per element of the span, or
// null when `row_frozen` (all ones or all zeros) holds for the whole span.
template <typename T>
void AdamUpdate(int64_t begin, int64_t end, T* __restrict var, T* __restrict m,
            T* __restrict v, const T* __restrict grad,
            const uint8_t* __restrict frozen,
            typename Bits<T>::Type row_frozen, Hyper<T> h) {
  using U = typename Bits<T>::Type;
  for (int64_t i = begin; i < end; ++i) {
    const U keep =
        frozen ? U(0) - static_cast<U>(frozen[i - begin]) : row_frozen;
    const T g = Choose<T>(keep, T(0), grad[i]);
    AdamElement<T>(var[i], m[i], v[i], g, g * g, keep, h);
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

// Keras 3's Adam / AdamW with a tf.IndexedSlices gradient: Keras densifies
// it (each row the sum, in the order of `indices`, from +0, of the values
// naming it: UnsortedSegmentSum), and updates every row. For `v` it
// densifies the squared values (Keras' sparse `square` keeps the slices:
// a row named twice gets a*a + b*b), or, `square_of_sum`, squares the
// dense gradient (Keras versions whose `square` densifies first). One pass
// over var, m and v after summing the named rows.
template <typename T, bool kSquareOfSum>
void AdamSparseRow(int64_t size, T* __restrict var, T* __restrict m,
                   T* __restrict v, const T* __restrict g_row,
                   const T* __restrict g2_row, const uint8_t* __restrict frozen,
                   typename Bits<T>::Type row_keep, const Hyper<T>& h) {
  using U = typename Bits<T>::Type;
  for (int64_t j = 0; j < size; ++j) {
    const U keep = frozen ? Keep<T>(frozen[j]) : row_keep;
    const T g = Choose<T>(keep, T(0), g_row[j]);
    const T g2 = kSquareOfSum ? g * g : Choose<T>(keep, T(0), g2_row[j]);
    AdamElement<T>(var[j], m[j], v[j], g, g2, keep, h);
  }
}

template <typename T, typename Index>
class PartialApplyKerasAdamSparseOp : public OpKernel {
 public:
  explicit PartialApplyKerasAdamSparseOp(OpKernelConstruction* ctx)
      : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_locking", &use_exclusive_lock_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("decay", &decay_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("square_of_sum", &square_of_sum_));
  }

  void Compute(OpKernelContext* ctx) override {
    auto locks = Lock<T>(ctx, use_exclusive_lock_, {0, 1, 2});
    std::vector<Tensor> vars;
    OP_REQUIRES_OK(ctx, GetVariables<T>(ctx, use_exclusive_lock_, {0, 1, 2},
                                        &vars));
    Tensor &var = vars[0], &m = vars[1], &v = vars[2];
    OP_REQUIRES_OK(ctx, CheckSameShape(var.shape(), {m, v}, "var, m and v"));
    OP_REQUIRES(ctx, var.dims() >= 1,
                ::tensorflow::errors::InvalidArgument(
                    "var must have rows for a sparse gradient: ",
                    var.shape().DebugString()));
    const Tensor& values = ctx->input(9);
    const Tensor& indices = ctx->input(10);
    Frozen frozen;
    OP_REQUIRES_OK(ctx, ReadFrozen(ctx->input(11), var.shape(), &frozen));
    OP_REQUIRES_OK(ctx, CheckScalars(ctx, 3, 9));
    const int64_t rows = var.dim_size(0), row_size = frozen.row_size;
    const int64_t n = indices.NumElements();
    OP_REQUIRES(ctx,
                indices.dims() == 1 && values.dims() == var.dims() &&
                    values.dim_size(0) == n &&
                    values.NumElements() == n * row_size,
                ::tensorflow::errors::InvalidArgument(
                    "grad values ", values.shape().DebugString(),
                    " and indices ", indices.shape().DebugString(),
                    " do not name rows of ", var.shape().DebugString()));
    const Index* index = indices.flat<Index>().data();
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, index[i] >= 0 && index[i] < rows,
                  ::tensorflow::errors::InvalidArgument(
                      "grad indices[", i, "] = ", index[i], " is not in [0, ",
                      rows, ")"));
    }
    auto scalar = [ctx](int i) { return ctx->input(i).scalar<T>()(); };
    Hyper<T> h;
    h.alpha = scalar(3);
    h.one_minus_beta1 = scalar(4);
    h.one_minus_beta2 = scalar(5);
    h.epsilon = scalar(6);
    h.weight_decay = scalar(7);
    h.lr = scalar(8);
    h.decay = decay_;
    // The dense gradient's named rows, summed as UnsortedSegmentSum sums
    // them: in the order of `indices`, from +0.
    std::vector<int64_t> slot_of_row(rows, -1);
    int64_t named = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (slot_of_row[index[i]] < 0) slot_of_row[index[i]] = named++;
    }
    std::vector<T> sums(named * row_size, T(0));
    std::vector<T> squares(square_of_sum_ ? 0 : named * row_size, T(0));
    const T* value = values.flat<T>().data();
    for (int64_t i = 0; i < n; ++i) {
      T* sum = sums.data() + slot_of_row[index[i]] * row_size;
      const T* row = value + i * row_size;
      for (int64_t j = 0; j < row_size; ++j) sum[j] = sum[j] + row[j];
      if (!square_of_sum_) {
        T* square = squares.data() + slot_of_row[index[i]] * row_size;
        for (int64_t j = 0; j < row_size; ++j) {
          square[j] = square[j] + row[j] * row[j];
        }
      }
    }
    const std::vector<T> zeros(row_size, T(0));
    T* var_p = var.flat<T>().data();
    T* m_p = m.flat<T>().data();
    T* v_p = v.flat<T>().data();
    const bool square_of_sum = square_of_sum_;
    ParallelFor(ctx, rows, row_size, /*cost_per_element=*/30,
                [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t slot = slot_of_row[r];
        const T* g = slot < 0 ? zeros.data() : sums.data() + slot * row_size;
        const T* g2 = square_of_sum || slot < 0
                          ? zeros.data()
                          : squares.data() + slot * row_size;
        const int64_t first = r * row_size;
        const uint8_t* bytes =
            frozen.per_element ? frozen.data + first : nullptr;
        const auto keep = Keep<T>(frozen.per_element ? 0 : frozen.data[r]);
        if (square_of_sum) {
          AdamSparseRow<T, true>(row_size, var_p + first, m_p + first,
                                 v_p + first, g, g2, bytes, keep, h);
        } else {
          AdamSparseRow<T, false>(row_size, var_p + first, m_p + first,
                                  v_p + first, g, g2, bytes, keep, h);
        }
      }
    });
  }

 private:
  bool use_exclusive_lock_;
  bool decay_;
  bool square_of_sum_;
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
      .Input("frozen: Tfrozen")            \
      .Attr("T: {float, double}")          \
      .Attr("Tfrozen: {bool, uint8} = DT_BOOL") \
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

// Keras 3's Adam / AdamW update_step with a tf.IndexedSlices gradient.
REGISTER_OP("TfpartialResourceApplyKerasAdamSparse")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("alpha: T")
    .Input("one_minus_beta1: T")
    .Input("one_minus_beta2: T")
    .Input("epsilon: T")
    .Input("weight_decay: T")
    .Input("lr: T")
    .Input("grad_values: T")
    .Input("grad_indices: Tindices")
    .Input("frozen: bool")
    .Attr("T: {float, double}")
    .Attr("Tindices: {int32, int64}")
    .Attr("decay: bool")
    .Attr("square_of_sum: bool")
    .Attr("use_locking: bool = false")
    .SetShapeFn(::tensorflow::shape_inference::NoOutputs);

#define TFPARTIAL_REGISTER_ADAM_SPARSE(T, INDEX)                          \
  REGISTER_KERNEL_BUILDER(Name("TfpartialResourceApplyKerasAdamSparse")   \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .HostMemory("var")                          \
                              .HostMemory("m")                            \
                              .HostMemory("v")                            \
                              .TypeConstraint<T>("T")                     \
                              .TypeConstraint<INDEX>("Tindices"),         \
                          ::tfpartial::PartialApplyKerasAdamSparseOp<T, INDEX>);
TFPARTIAL_REGISTER_ADAM_SPARSE(float, int32_t);
TFPARTIAL_REGISTER_ADAM_SPARSE(float, int64_t);
TFPARTIAL_REGISTER_ADAM_SPARSE(double, int32_t);
TFPARTIAL_REGISTER_ADAM_SPARSE(double, int64_t);

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
