#include <pocketsphinx.h>
#include <ps_search.h>
#include <sphinxbase/err.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/ngram_model.h>
#include <sphinxbase/fsg_model.h>
#include <sphinxbase/jsgf.h>
