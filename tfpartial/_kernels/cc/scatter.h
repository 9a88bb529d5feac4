// A compact element step's copies by flat offset: the trainable elements
// of a tensor (the variable's value, its gradient) gathered into a vector,
// and the vector written back into the variable, in place.
//
// TensorFlow's GatherV2 copies each element through a general slice copy
// (30-37 ns an element of a 10M-element variable here, against 4-5 for the
// loop below), and its ResourceScatterNdUpdate does the same and leaves the
// variable in its sparse-access mode, where every later read copies the
// whole variable (docs/performance.md, "Sparse fine-tuning", has them
// measured). These ops read or write each element with one load or store
// and leave the variable's mode as it is.

#ifndef TFPARTIAL_KERNELS_SCATTER_H_
#define TFPARTIAL_KERNELS_SCATTER_H_

#include "common.h"
#include "tensorflow/core/framework/resource_mgr.h"
#include "tensorflow/core/framework/resource_var.h"

namespace tfpartial {
namespace {

template <typename T>
class ScatterOffsetsOp : public OpKernel {
 public:
  explicit ScatterOffsetsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& offsets = ctx->input(1);
    const Tensor& values = ctx->input(2);
    {
      // Before the variable is read as a tensor of T: reading one of
      // another dtype (and copying it, when a read holds its buffer) would
      // stop the process, not fail the op. A variable's dtype is fixed.
      ::tensorflow::core::RefCountPtr<::tensorflow::Var> variable;
      OP_REQUIRES_OK(ctx, ::tensorflow::LookupResource(
                              ctx, ::tensorflow::HandleFromInput(ctx, 0),
                              &variable));
      OP_REQUIRES(ctx,
                  variable->tensor()->dtype() ==
                      ::tensorflow::DataTypeToEnum<T>::v(),
                  ::tensorflow::errors::InvalidArgument(
                      "the variable's dtype is not the values' dtype"));
    }
    auto locks = Lock<T>(ctx, /*locked=*/true, {0});
    std::vector<Tensor> vars;
    OP_REQUIRES_OK(ctx, GetVariables<T>(ctx, /*locked=*/true, {0}, &vars));
    Tensor& var = vars[0];
    OP_REQUIRES_OK(ctx, CheckOffsets(offsets, var.NumElements()));
    OP_REQUIRES(ctx,
                values.dims() == 1 &&
                    values.NumElements() == offsets.NumElements(),
                ::tensorflow::errors::InvalidArgument(
                    "values must be a vector of one value per offset; got ",
                    values.shape().DebugString(), " for ",
                    offsets.NumElements(), " offsets"));
    T* __restrict out = var.flat<T>().data();
    const int32_t* __restrict at = offsets.flat<int32_t>().data();
    const T* __restrict in = values.flat<T>().data();
    ParallelFor(ctx, offsets.NumElements(), 1, /*cost_per_element=*/4,
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) out[at[i]] = in[i];
                });
  }
};


// How many elements ahead a gather asks for the element it will read: the
// offsets are known in advance, the addresses scattered, so the loads'
// cache misses overlap instead of waiting one after the other.
constexpr int64_t kPrefetchAhead = 16;

template <typename T>
class GatherOffsetsOp : public OpKernel {
 public:
  explicit GatherOffsetsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& offsets = ctx->input(1);
    OP_REQUIRES_OK(ctx, CheckOffsets(offsets, params.NumElements()));
    const int64_t count = offsets.NumElements();
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, ::tensorflow::TensorShape({count}), &output));
    const T* __restrict in = params.flat<T>().data();
    const int32_t* __restrict at = offsets.flat<int32_t>().data();
    T* __restrict out = output->flat<T>().data();
    ParallelFor(ctx, count, 1, /*cost_per_element=*/8,
                [&](int64_t begin, int64_t end) {
                  const int64_t ahead = std::max(begin, end - kPrefetchAhead);
                  for (int64_t i = begin; i < ahead; ++i) {
                    __builtin_prefetch(in + at[i + kPrefetchAhead]);
                    out[i] = in[at[i]];
                  }
                  for (int64_t i = ahead; i < end; ++i) out[i] = in[at[i]];
                });
  }
};

}  // namespace
}  // namespace tfpartial

REGISTER_OP("TfpartialResourceScatterOffsets")
    .Input("var: resource")
    .Input("offsets: int32")
    .Input("values: T")
    .Attr("T: {float, double}")
    .TFPARTIAL_NO_OUTPUT;

#define TFPARTIAL_REGISTER_SCATTER(T)                                     \
  REGISTER_KERNEL_BUILDER(Name("TfpartialResourceScatterOffsets")         \
                              .Device(::tensorflow::DEVICE_CPU)           \
                              .HostMemory("var")                          \
                              .TypeConstraint<T>("T"),                    \
                          ::tfpartial::ScatterOffsetsOp<T>)
TFPARTIAL_REGISTER_SCATTER(float);
TFPARTIAL_REGISTER_SCATTER(double);

REGISTER_OP("TfpartialGatherOffsets")
    .Input("params: T")
    .Input("offsets: int32")
    .Output("output: T")
    .Attr("T: {float, double}")
    .SetShapeFn([](::tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->Vector(c->Dim(c->input(1), 0)));
      return ::tensorflow::OkStatus();
    });

#define TFPARTIAL_REGISTER_GATHER(T)                                  \
  REGISTER_KERNEL_BUILDER(Name("TfpartialGatherOffsets")              \
                              .Device(::tensorflow::DEVICE_CPU)       \
                              .TypeConstraint<T>("T"),                \
                          ::tfpartial::GatherOffsetsOp<T>)
TFPARTIAL_REGISTER_GATHER(float);
TFPARTIAL_REGISTER_GATHER(double);

#endif  // TFPARTIAL_KERNELS_SCATTER_H_
