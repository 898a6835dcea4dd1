#include "k8s/decode.hpp"
