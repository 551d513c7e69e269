"""libonnxflow.a: the static form of the library, one archive of every object of this repository
that a target links (Bazel 4 has no cc_static_library)."""

def _static_library_impl(ctx):
    archives = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            # Only this repository's code: system libraries stay shared (-lprotobuf, -ltbb, ...).
            if linker_input.owner.workspace_name != ctx.label.workspace_name:
                continue
            for library in linker_input.libraries:
                archive = library.pic_static_library or library.static_library
                if archive and archive not in archives:
                    archives.append(archive)
    out = ctx.actions.declare_file(ctx.attr.out)
    # ar's MRI script merges archives member by member (names may repeat across folders).
    script = "create {}\n{}save\nend\n".format(out.path, "".join(["addlib {}\n".format(a.path) for a in archives]))
    ctx.actions.run_shell(
        inputs = archives,
        outputs = [out],
        command = "printf '%s' \"$1\" | ar -M",
        arguments = [script],
        mnemonic = "StaticLibrary",
        progress_message = "Archiving " + out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

static_library = rule(
    implementation = _static_library_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "out": attr.string(mandatory = True),
    },
)
