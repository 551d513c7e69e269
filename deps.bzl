"""What a Bazel workspace that depends on onnxflow calls in its WORKSPACE:

    local_repository(name = "onnxflow", path = "...")   # or http_archive / git_repository
    load("@onnxflow//:deps.bzl", "onnxflow_dependencies")
    onnxflow_dependencies()

and then deps = ["@onnxflow//:onnxflow"] (C++ API) or ["@onnxflow//:onnxflow_c"] (C API). It defines
the offline stand-ins for Bazel's rule repositories (third_party/, so the build never downloads) and
@system, the Debian packages onnxflow links (see bazelw for the list). Repositories the workspace
already defines are left alone.
"""

def _third_party_impl(rctx):
    # third_party/<name> of the onnxflow checkout, wherever it is, linked file by file.
    source = rctx.path(Label("//:WORKSPACE")).dirname.get_child("third_party").get_child(rctx.attr.subdir)
    for child in source.readdir():
        rctx.symlink(child, child.basename)

_third_party = repository_rule(
    implementation = _third_party_impl,
    attrs = {"subdir": attr.string(mandatory = True)},
    local = True,
)

def onnxflow_dependencies():
    existing = native.existing_rules()
    for name in ["rules_cc", "rules_java", "rules_proto", "rules_python", "remote_coverage_tools"]:
        if name not in existing:
            _third_party(name = name, subdir = name)
    if "platforms" not in existing:
        # Debian's bazel-bootstrap ships it (bazel-platforms); the same as onnxflow's .bazelrc override.
        native.local_repository(name = "platforms", path = "/usr/share/bazel/platforms")
    if "system" not in existing:
        native.new_local_repository(
            name = "system",
            path = "/usr",
            build_file = "@onnxflow//third_party:system_libs.BUILD",
        )
