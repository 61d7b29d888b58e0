/**
 * Common lowercase English words that are one token (with their leading space) in the BPE vocabularies of
 * Llama 3, Qwen 2 and GPT-style tokenizers; used for prompt filler and for the unique prefix, so that a
 * prompt's token count moves by one per word and calibration converges in a step or two.
 */
export const WORDS: readonly string[] = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were her she there one all we their been has when who will more no if out so said what up its about ' +
  'into than them can only other new some could time these two may then do first any my now such like our ' +
  'over man me even most made after also did many before must through back years where much your way well ' +
  'down should because each just those people how too little state good very make world still own see men ' +
  'work long get here between both life being under never day same another know while last might us great ' +
  'old year off come since against go came right used take three small house water light city night point ' +
  'hand high part place case end group number room line river field music story table paper garden window ' +
  'road letter morning market winter summer stone horse tree bird fire green blue red black white north south ' +
  'east west open close early late happy quiet simple clear strong young free full half true real sure'
)
  .split(' ')
  .filter((w) => w.length > 0);
