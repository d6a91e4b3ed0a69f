// Signalsmith Stretch's formant mode as a bench peer (formants.sh builds it against the
// library's header; the Python binding, python-stretch, does not expose the formant calls).
//
//   signalsmith_formant IN.f32 OUT.f32 RATE SEMITONES FORMANT(0|1) BASE_HZ
//
// IN.f32 is mono raw float32; OUT.f32 gets as many frames. The library's documented use
// (README, "Formant compensation"): presetDefault(channels, rate), setTransposeSemitones(s),
// setFormantFactor(1, compensatePitch = true) to keep the formants under the pitch shift, and
// setFormantBase(BASE_HZ/rate), "a rough estimate of fundamental frequency" (0: the library
// detects it). FORMANT 0 is its plain pitch shift. exact() runs the whole signal with the
// library's own latency handling (an output seek, then a flush), so the output starts aligned
// with the input and has its length; formants.py checks the alignment.
#include <cstring>  // the linear library uses std::memcpy without including it
#include "signalsmith-stretch.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
	if (argc != 7) {
		std::fprintf(stderr, "usage: %s IN.f32 OUT.f32 RATE SEMITONES FORMANT(0|1) BASE_HZ\n", argv[0]);
		return 2;
	}
	double rate = std::atof(argv[3]), semitones = std::atof(argv[4]), baseHz = std::atof(argv[6]);
	bool formant = std::atoi(argv[5]) != 0;
	std::FILE *in = std::fopen(argv[1], "rb");
	if (!in) return 1;
	std::vector<std::vector<float>> x(1), y(1);
	float v;
	while (std::fread(&v, sizeof v, 1, in) == 1) x[0].push_back(v);
	std::fclose(in);
	int n = int(x[0].size());
	y[0].assign(n, 0.0f);
	signalsmith::stretch::SignalsmithStretch<float> s;
	s.presetDefault(1, float(rate));
	s.setTransposeSemitones(float(semitones));
	if (formant) {
		s.setFormantFactor(1, true);
		s.setFormantBase(float(baseHz / rate));
	}
	if (!s.exact(x, n, y, n)) return 1;
	std::FILE *out = std::fopen(argv[2], "wb");
	if (!out) return 1;
	std::fwrite(y[0].data(), sizeof(float), n, out);
	std::fclose(out);
	return 0;
}
