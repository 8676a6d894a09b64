// Opening a page in headless Chromium for a test, and reading what the page left in its DOM:
// the browser dumps the DOM after its scripts ran (--virtual-time-budget lets timers and
// animation frames finish first) and optionally saves a screenshot. Header-only: used by
// report_page_test.cpp.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::browser_test {

namespace fs = std::filesystem;

using cli_test::read_file;
using cli_test::shell_quote;

// The browser: $NCV_CHROMIUM when set, else the first of Debian's `chromium` and the usual other
// names on PATH; "" when there is none.
inline std::string find_browser() {
  if (const char* env = std::getenv("NCV_CHROMIUM"); env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  std::vector<std::string> folders;
  while (std::getline(dirs, dir, ':')) folders.push_back(dir);
  for (const char* name :
       {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    for (const std::string& d : folders) {
      const fs::path p = fs::path(d) / name;
      std::error_code ec;
      if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  return "";
}

struct BrowserRun {
  int exit_code = -1;
  std::string dom;  // the DOM after the page's scripts ran
  std::string log;  // the browser's stderr (with --enable-logging: console messages as CONSOLE)
};

// Opens `url` in headless `browser`, its profile and outputs in `work` (one folder per run: runs
// in parallel must not share a profile). `screenshot` (optional): a PNG of the window.
inline BrowserRun open_page(const std::string& browser, const std::string& url,
                            const fs::path& work, const fs::path& screenshot = {}, int width = 1400,
                            int height = 3000) {
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path dom = work / "dom.html";
  const fs::path log = work / "browser.log";
  std::string cmd = "timeout 90 " + shell_quote(browser);
  cmd += " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions";
  cmd += " --user-data-dir=" + shell_quote((work / "profile").string());
  cmd += " --enable-logging=stderr --v=0 --virtual-time-budget=15000";
  cmd += " --window-size=" + std::to_string(width) + "," + std::to_string(height);
  if (!screenshot.empty()) cmd += " --screenshot=" + shell_quote(screenshot.string());
  cmd += " --dump-dom " + shell_quote(url);
  cmd += " >" + shell_quote(dom.string()) + " 2>" + shell_quote(log.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  BrowserRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.dom = read_file(dom);
  r.log = read_file(log);
  std::error_code ec;
  fs::remove_all(work / "profile", ec);  // megabytes of browser state nobody reads
  return r;
}

// The attributes of a start tag's text ("<canvas id=\"x\" data-rendered=\"true\">").
inline std::map<std::string, std::string> attributes(const std::string& tag) {
  static const std::regex attr(R"re(\s([A-Za-z_:][-A-Za-z0-9_:.]*)(?:="([^"]*)")?)re");
  std::map<std::string, std::string> out;
  for (auto it = std::sregex_iterator(tag.begin(), tag.end(), attr); it != std::sregex_iterator();
       ++it) {
    out[(*it)[1].str()] = (*it)[2].str();
  }
  return out;
}

// Every start tag `<name ...>` in `dom`, as its attributes, in document order.
inline std::vector<std::map<std::string, std::string>> elements(const std::string& dom,
                                                                const std::string& name) {
  const std::regex start("<" + name + R"re((\s[^>]*)?>)re");
  std::vector<std::map<std::string, std::string>> out;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), start); it != std::sregex_iterator();
       ++it) {
    out.push_back(attributes((*it)[1].str()));
  }
  return out;
}

}  // namespace ncv::browser_test
