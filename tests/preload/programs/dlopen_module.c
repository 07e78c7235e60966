/* The module tests/preload/programs/dlopen.c loads and unloads. */
int spoor_test_dlopen_module_answer(void) { return 42; }
