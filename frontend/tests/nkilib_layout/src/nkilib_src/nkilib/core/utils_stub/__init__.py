def kernel_assert(condition, text):
    assert condition, text
