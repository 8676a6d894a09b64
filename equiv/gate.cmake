# The gate (equiv.h): the three levels over a kernel's options and shapes.
add_library(ncv_equiv STATIC
  equiv.cpp
  equiv_report.cpp
  frontier.cpp
  link_status.cpp
  peel.cpp
  reorder.cpp
  shapes.cpp
  structural.cpp)
target_include_directories(ncv_equiv PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(ncv_equiv PUBLIC ncv_equiv_real ncv_equiv_terms ncv_check ncv_kernels ncv_oracle ncv_solver
                      nlohmann_json::nlohmann_json Threads::Threads)
