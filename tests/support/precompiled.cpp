// The translation unit that owns the test programs' shared precompiled header
// (tests/CMakeLists.txt): GoogleTest, nlohmann-json and the standard headers that most test
// sources include are parsed once per build instead of once per test source.
