/* Progress of long runs (bench/progress_meter.c): [k/N] and the time left, on stderr. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "harness.h"

GT_TEST(the_time_left_comes_from_the_steps_done)
{
    char buf[64];
    GT_ASSERT_STR_EQ(progress_left(10, 0, 5, buf, sizeof buf), ""); /* nothing known yet */
    GT_ASSERT_STR_EQ(progress_left(10, 2, 5, buf, sizeof buf), " (about 15 s left)");
    GT_ASSERT_STR_EQ(progress_left(100, 1, 5, buf, sizeof buf), " (about 7 min left)");
    GT_ASSERT_STR_EQ(progress_left(3, 5, 5, buf, sizeof buf), ""); /* done */
}

GT_TEST(steps_are_numbered_on_stderr)
{
    FILE *tmp = tmpfile();
    GT_ASSERT(tmp != NULL);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    progress_meter p;
    progress_begin(&p, "greenctx bench: test", 2);
    progress_step(&p, "first %d", 1);
    progress_step(&p, "second");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[256] = "";
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    GT_ASSERT(strncmp(text, "greenctx bench: test [1/2] first 1\ngreenctx bench: test [2/2] second (about ",
                      75) == 0);
    GT_ASSERT_CONTAINS(text, " s left)\n");
}
