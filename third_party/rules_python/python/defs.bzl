# Offline stand-in for rules_python.
py_binary = native.py_binary
py_library = native.py_library
py_runtime = native.py_runtime
py_runtime_pair = native.py_runtime_pair
