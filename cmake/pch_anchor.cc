// The one unit of each precompiled-header holder target
// (paradnn_service_pch in the top CMakeLists.txt, paradnn_test_pch in
// tests/CMakeLists.txt): CMake makes a target's PCH only for a target with
// a source. It holds no code, and lives outside the source folders so that
// no folder's include view is judged by the holder's compile command.
