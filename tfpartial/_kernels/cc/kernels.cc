// tfpartial's compiled kernels: optimizer updates with a freeze inside them.
//
// One translation unit (TensorFlow's headers take most of a build's time),
// built and loaded by tfpartial/_kernels/_native.py; every file of this folder is
// part of the build's cache key (../_build.py).

#include "common.h"
#include "adam.h"
#include "sgd.h"
#include "scatter.h"
