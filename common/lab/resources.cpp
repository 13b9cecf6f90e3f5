// SPDX-License-Identifier: MIT
#include "lab/resources.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>

#include "lab/check.hpp"

namespace lab {

void warn_if_failed(int result, std::string_view verb) noexcept {
    if (result != 0) {
        const int error_number = result > 0 ? result : errno;
        std::cerr << "warning: " << verb << " failed: " << std::strerror(error_number) << '\n';
    }
}

DeviceList::DeviceList() {
    devices_ =
        check_ptr(ibv_get_device_list(&count_), "ibv_get_device_list",
                  "this kernel offers no RDMA device: run './lab doctor', or './lab vm' for one");
}

DeviceList::~DeviceList() {
    ibv_free_device_list(devices_);
}

}  // namespace lab
