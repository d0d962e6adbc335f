"""Link probabilities and a sentence score: features, a logistic fit, calibration files
(:mod:`.calibration`) and the expected calibration error (:mod:`.ece`). Standard library and numpy."""
