// Prints the master's OpenAPI document (master/http/openapi.h), for validate.sh.
#include <iostream>

#include "master/http/openapi.h"

int main() {
  std::cout << snn::OpenApiDocument();
  return 0;
}
