#include "k8s/yaml.hpp"
