#include "k8s/label_selector.hpp"
