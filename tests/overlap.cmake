# Communication beside compute (issue 12), included from tests/CMakeLists.txt after the
# object tests: the caller's current context kept across a library's init, and
# `greenctx bench overlap` / the NCCL example where they cannot run.

# gctx_current_context_save / _restore against a fake init that changes the current context.
greenctx_object_test_binary(test_current test_current.c)
greenctx_driver_test(current_context COMMAND test_current SIM_ENV GREENCTX_SIM_DEVICES=h200)
