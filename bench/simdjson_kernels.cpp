// simdjson peer for the trainprof benchmark.
//
// Loads the whole trace into memory (simdjson is not a streaming parser),
// walks traceEvents with the On-Demand API and sums "dur" per name for
// events whose cat is kernel, gpu_memcpy or gpu_memset.
//
// build: g++ -O3 -std=c++17 bench/simdjson_kernels.cpp -lsimdjson -o simdjson_kernels
// usage: simdjson_kernels TRACE.json [--csv OUT.csv]
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

struct Agg {
    uint64_t count = 0, total = 0, min = UINT64_MAX, max = 0;
};

bool is_gpu_cat(std::string_view c)
{
    return c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset";
}

void csv_field(FILE *f, const std::string &s)
{
    std::fputc('"', f);
    for (char c : s) {
        if (c == '"')
            std::fputc('"', f);
        std::fputc(c, f);
    }
    std::fputc('"', f);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s TRACE.json [--csv OUT.csv]\n", argv[0]);
        return 2;
    }
    const char *csv_path = nullptr;
    for (int i = 2; i + 1 < argc; i++)
        if (!std::strcmp(argv[i], "--csv"))
            csv_path = argv[i + 1];

    std::unordered_map<std::string, Agg> agg;
    try {
        simdjson::padded_string json = simdjson::padded_string::load(argv[1]);
        simdjson::ondemand::parser parser;
        simdjson::ondemand::document doc = parser.iterate(json);
        for (simdjson::ondemand::object ev : doc["traceEvents"].get_array()) {
            std::string_view cat, name;
            double dur = 0;
            bool have_cat = false, have_name = false;
            for (auto field : ev) {
                simdjson::ondemand::raw_json_string key = field.key();
                if (key == "cat") {
                    cat = field.value().get_string();
                    have_cat = true;
                    if (!is_gpu_cat(cat))
                        break; // not interesting: the rest is skipped
                } else if (key == "name") {
                    name = field.value().get_string();
                    have_name = true;
                } else if (key == "dur") {
                    dur = field.value().get_double();
                }
            }
            if (!have_cat || !have_name || !is_gpu_cat(cat))
                continue;
            uint64_t d = (uint64_t)std::llround(dur * 1000.0);
            Agg &a = agg[std::string(name)];
            a.count++;
            a.total += d;
            a.min = std::min(a.min, d);
            a.max = std::max(a.max, d);
        }
    } catch (const simdjson::simdjson_error &e) {
        std::fprintf(stderr, "simdjson error: %s\n", e.what());
        return 1;
    }

    std::vector<std::pair<std::string, Agg>> rows(agg.begin(), agg.end());
    std::sort(rows.begin(), rows.end(), [](const auto &x, const auto &y) {
        if (x.second.total != y.second.total)
            return x.second.total > y.second.total;
        return x.first < y.first;
    });
    uint64_t total = 0, count = 0;
    for (auto &r : rows) {
        total += r.second.total;
        count += r.second.count;
    }
    std::printf("gpu_events %llu names %zu total_ns %llu\n", (unsigned long long)count, rows.size(),
                (unsigned long long)total);
    for (size_t i = 0; i < rows.size() && i < 10; i++)
        std::printf("%12.3f ms %8llu  %.90s\n", rows[i].second.total / 1e6,
                    (unsigned long long)rows[i].second.count, rows[i].first.c_str());
    if (csv_path) {
        FILE *f = std::fopen(csv_path, "w");
        if (!f) {
            std::perror(csv_path);
            return 1;
        }
        std::fputs("name,count,total_ns,min_ns,max_ns\n", f);
        for (auto &r : rows) {
            csv_field(f, r.first);
            std::fprintf(f, ",%llu,%llu,%llu,%llu\n", (unsigned long long)r.second.count,
                         (unsigned long long)r.second.total, (unsigned long long)r.second.min,
                         (unsigned long long)r.second.max);
        }
        std::fclose(f);
    }
    return 0;
}
