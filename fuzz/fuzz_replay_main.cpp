// Replays fuzz inputs through a libFuzzer target without libFuzzer (a gcc build, CTest): each
// argument is a file, or a directory whose files (not its hidden ones) are all replayed. A target
// that finds a bug aborts (or trips a sanitizer in a sanitizer build), failing the test; otherwise
// this prints how many inputs it ran and exits 0. Used by fuzz/CMakeLists.txt for the seeds and for
// the crashing inputs kept in fuzz/regressions/.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

bool replay_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "fuzz replay: cannot open %s\n", path.c_str());
        return false;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    return true;
}

} // namespace

int main(int argc, char **argv) {
    size_t count = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st {};
        if (stat(argv[i], &st) != 0) {
            std::fprintf(stderr, "fuzz replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        std::vector<std::string> files;
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            if (d == nullptr) return 1;
            while (dirent *e = readdir(d))
                if (e->d_name[0] != '.') files.push_back(std::string(argv[i]) + "/" + e->d_name);
            closedir(d);
            std::sort(files.begin(), files.end());
        } else {
            files.push_back(argv[i]);
        }
        for (const std::string &f : files) {
            if (!replay_file(f)) return 1;
            ++count;
        }
    }
    std::printf("fuzz replay: %zu inputs, no failure\n", count);
    return 0;
}
