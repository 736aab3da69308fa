#include <iostream>

#include "gpuattr/app/build_info.h"

int main() {
  std::cout << "gpuattr " << gpuattr::build::kVersion << "\n";
  return 0;
}
