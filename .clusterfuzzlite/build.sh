#!/bin/bash -eu
# The OSS-Fuzz build contract: compile with $CXX / $CXXFLAGS (which carry the sanitizer flags),
# link with $LIB_FUZZING_ENGINE, put each target, its <target>_seed_corpus.zip and its .dict in
# $OUT. Only the fuzz targets and their libraries are built (NCVERIFY_FUZZ_ONLY).
targets=(fuzz_program fuzz_nkir_parse fuzz_timing fuzz_solver fuzz_dtype)
src="$SRC/ncverify"
cmake -S "$src" -B "$WORK/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DNCVERIFY_FUZZ=ON -DNCVERIFY_FUZZ_ONLY=ON -DNCVERIFY_FUZZ_EXTERNAL_FLAGS=ON \
  -DNCVERIFY_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" -DNCVERIFY_BENCH=OFF -DNCVERIFY_FUZZ_CLI=OFF
cmake --build "$WORK/build" -j "$(nproc)" --target "${targets[@]}"
for t in "${targets[@]}"; do
  cp "$WORK/build/fuzz/$t" "$OUT/"
  if [[ -d "$src/corpus/$t" ]]; then
    (cd "$src/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
  # The same libFuzzer options as ci/fuzz (see there why no per-input leak scan and no entropic
  # schedule).
  printf '[libfuzzer]\ndetect_leaks = 0\nentropic = 0\nrss_limit_mb = 4096\ntimeout = 25\n' \
    >"$OUT/$t.options"
  if [[ -f "$src/corpus/$t.dict" ]]; then
    cp "$src/corpus/$t.dict" "$OUT/$t.dict"
    printf 'dict = %s.dict\n' "$t" >>"$OUT/$t.options"
  fi
done
