// simdjson peer for the trainprof benchmark.
//
// Loads the whole trace into memory (simdjson is not a streaming parser),
// walks traceEvents with the On-Demand API and sums "dur" per name for
// events whose cat is kernel, gpu_memcpy or gpu_memset.
//
// With --dom it instead parses every event with the DOM parser, which checks
// every byte (On-Demand skips what it is not asked for), and prints the
// parse's own seconds: a floor for any parser that validates fully.
//
// build: g++ -O3 -std=c++17 bench/simdjson_kernels.cpp -lsimdjson -o simdjson_kernels
// usage: simdjson_kernels TRACE.json [--csv OUT.csv | --dom]
#include <simdjson.h>

#include <algorithm>
#include <chrono>
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

// The DOM parse alone, timed without loading or copying. A streaming reader
// never holds the whole tree, so the events are parsed in batches of about
// 1 MiB (each line holding one event, as the generator writes them, becomes
// an element of a "[...]" document): the parser's buffers stay in cache like
// a streaming reader's would. Every byte of each batch is validated.
int dom_parse(const char *path)
{
    simdjson::padded_string json = simdjson::padded_string::load(path);
    std::string_view all(json.data(), json.size());
    simdjson::dom::parser parser;
    std::string batch;
    double secs = 0;
    uint64_t gpu = 0, parsed = 0;
    auto flush = [&]() -> bool {
        if (batch.size() <= 1) return true;
        batch.back() = ']'; // the last element's comma
        simdjson::padded_string doc(batch);
        auto t0 = std::chrono::steady_clock::now();
        simdjson::dom::element root;
        auto err = parser.parse(doc).get(root);
        secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (err) {
            std::fprintf(stderr, "simdjson error: %s\n", simdjson::error_message(err));
            return false;
        }
        for (simdjson::dom::element ev : root.get_array()) {
            std::string_view cat;
            if (!ev["cat"].get(cat) && is_gpu_cat(cat)) gpu++;
        }
        parsed += batch.size();
        batch = "[";
        return true;
    };
    batch = "[";
    for (size_t at = 0; at < all.size();) {
        size_t nl = all.find('\n', at);
        if (nl == std::string_view::npos) nl = all.size();
        std::string_view line = all.substr(at, nl - at);
        at = nl + 1;
        size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r,");
        if (b == std::string_view::npos || line[b] != '{' || line[e] != '}') continue; // not an event line
        batch.append(line.substr(b, e - b + 1));
        batch.push_back(',');
        if (batch.size() >= (1u << 20) && !flush()) return 1;
    }
    if (!flush()) return 1;
    std::printf("dom_parse_seconds %.3f gpu_events %llu bytes_parsed %llu\n", secs, (unsigned long long)gpu,
                (unsigned long long)parsed);
    return 0;
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
    for (int i = 2; i < argc; i++)
        if (!std::strcmp(argv[i], "--dom")) try {
                return dom_parse(argv[1]);
            } catch (const simdjson::simdjson_error &e) {
                std::fprintf(stderr, "simdjson error: %s\n", e.what());
                return 1;
            }

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
